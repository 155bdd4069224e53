"""The session layer shared by the candidate's and the interviewer's commands."""
