"""A catalogue of feature pipelines, leaky and clean, and the event log they run on.

Under the kata's contract a feature of row r may use r's time and keys (entity, category) and
rows strictly earlier than r's time. Amounts are whole numbers, so the clean features come out
bit for bit the same whatever order the rows are summed in.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

START = pd.Timestamp("2024-05-01")
KEYS = ("entity", "category")


def event_log(seed: int = 7) -> pd.DataFrame:
    """6 entities over 10 days. Each day has one batch time at which most entities log 2-3
    rows at the very same timestamp; now and then an entity logs a lone row at another time."""
    rng = np.random.default_rng(seed)
    rows = []
    for day in range(10):
        batch = START + pd.Timedelta(days=day, hours=int(rng.integers(0, 24)))
        for entity in ("u1", "u2", "u3", "u4", "u5", "u6"):
            rows += [(entity, batch)] * int(rng.choice([1, 2, 2, 3]))
            if rng.random() < 0.05:
                rows.append((entity, batch + pd.Timedelta(minutes=int(rng.integers(1, 900)))))
    n = len(rows)
    df = pd.DataFrame(rows, columns=["entity", "time"])
    df["category"] = rng.choice(["web", "app"], n)
    df["amount"] = rng.integers(1, 60, n).astype(float)
    df.loc[rng.random(n) < 0.08, "amount"] = np.nan
    df["target"] = rng.integers(0, 2, n)
    df["note"] = rng.choice(["x", "y", "z"], n)
    df = df.sample(frac=1.0, random_state=seed)  # rows come in no particular order
    df.index = pd.Index(rng.permutation(n) * 3 + 11, name="event")
    return df


def typed_log(seed: int = 7) -> pd.DataFrame:
    """The event log with a column of every kind a detector has to change: whole numbers that are
    often zero, whole numbers from -50 to 50, small decimals with exact zeros and gaps, booleans,
    categories, dates, text with two values (always "p" for u1, always "q" for u2) and constant
    columns, which may stay as they are."""
    df = event_log(seed)
    rng = np.random.default_rng(seed + 1)
    n = len(df)
    df["clicks"] = np.where(rng.random(n) < 0.3, 0, rng.integers(1, 101, n))
    df["delta"] = np.concatenate([[-50, 50], rng.integers(-50, 51, n - 2)])
    df["ratio"] = rng.choice([0.0, 0.1, 0.2, 0.3], n)
    df.loc[rng.random(n) < 0.1, "ratio"] = np.nan
    df["flag"] = rng.random(n) < 0.5
    df["plan"] = pd.Categorical(rng.choice(["free", "pro", "team"], n))
    df["signup"] = START - pd.to_timedelta(rng.integers(1, 400, n), unit="D")
    df["side"] = np.where(df["entity"] == "u1", "p", np.where(df["entity"] == "u2", "q",
                                                                rng.choice(["p", "q"], n)))
    df["source"] = "import"
    df["version"] = 3
    return df


def _mean(values: np.ndarray) -> float:
    values = values[~np.isnan(values)]
    return float(values.sum() / len(values)) if len(values) else np.nan


def _per_row(df: pd.DataFrame, value: str, pick) -> list[float]:
    """For each row i: the mean of `value` over the rows that pick(columns, i) selects."""
    columns = {c: df[c].to_numpy() for c in df.columns}
    v = df[value].to_numpy(dtype=float)
    return [_mean(v[pick(columns, i)]) for i in range(len(df))]


def _entity_window(days: float, closed: str = "left"):
    """Rows of the row's entity with time in [t - days, t) (or (t - days, t] when closed is
    'right', which includes the row itself)."""
    width = np.timedelta64(int(days * 24 * 3600), "s")

    def pick(columns, i):
        t, e = columns["time"], columns["entity"]
        if closed == "left":
            inside = (t >= t[i] - width) & (t < t[i])
        else:
            inside = (t > t[i] - width) & (t <= t[i])
        return inside & (e == e[i])
    return pick


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(["entity", "time"], kind="stable")


# ----- leaky pipelines: (name, function, expected leaky columns) -----

def centered_window(df):
    s = _sorted(df)
    mean = s.groupby("entity")["amount"].transform(
        lambda x: x.rolling(3, center=True, min_periods=1).mean())
    return pd.DataFrame({"amount_centered_3": mean}).reindex(df.index)


def missing_shift(df):
    s = _sorted(df)
    mean = s.groupby("entity")["amount"].transform(lambda x: x.rolling(3, min_periods=1).mean())
    return pd.DataFrame({"amount_mean_3": mean}).reindex(df.index)


def shift_one_row(df):
    """shift(1) within the entity: the previous row may share the row's timestamp."""
    s = _sorted(df)
    prev = s.groupby("entity")["amount"].shift(1)
    mean = prev.groupby(s["entity"]).transform(lambda x: x.rolling(3, min_periods=1).mean())
    return pd.DataFrame({"amount_prev_mean_3": mean}).reindex(df.index)


def target_encoding_all_rows(df):
    return pd.DataFrame({"category_rate": df.groupby("category")["target"].transform("mean")})


def normalization_whole_column(df):
    z = (df["amount"] - df["amount"].mean()) / df["amount"].std()
    return pd.DataFrame({"amount_z": z})


def own_value(df):
    return pd.DataFrame({"label": df["target"]})


def right_closed_time_window(df):
    return pd.DataFrame({"amount_mean_2D": _per_row(df, "amount", _entity_window(2, "right"))},
                        index=df.index)


def hours_to_next_event(df):
    s = _sorted(df)
    gap = (s.groupby("entity")["time"].shift(-1) - s["time"]).dt.total_seconds() / 3600
    return pd.DataFrame({"hours_to_next": gap}).reindex(df.index)


def entity_row_count(df):
    return pd.DataFrame({"entity_rows": df.groupby("entity")["time"].transform("size")})


def side_of(entity: str):
    """The row's own text value, for one entity only: it leaks whichever value that entity has."""
    def pipeline(df):
        return pd.DataFrame({f"side_of_{entity}": df["side"].where(df["entity"] == entity, "-")})
    pipeline.__name__ = f"side_of_{entity}"
    return pipeline


def note_if_x(df):
    """The row's own note where it is "x", missing elsewhere: a leak seen only as a value turning
    into a missing one, or back."""
    return pd.DataFrame({"note_if_x": df["note"].where(df["note"] == "x")})


SNAPSHOT = START + pd.Timedelta(days=5, hours=12)  # a batch time of event_log() in the middle
FINAL = event_log()["time"].max()


def final_amount_at_snapshot(df):
    """Rows of one mid-way snapshot get the amounts logged at the very end of the data. Only
    rows strictly before a later cut can show it."""
    final = ";".join(sorted(df.loc[df["time"] == FINAL, "amount"].map(repr)))
    return pd.DataFrame({"final_amount": np.where(df["time"] == SNAPSHOT, final, "")},
                        index=df.index)


# ----- clean pipelines -----

def point_in_time_mean(df):
    return pd.DataFrame({"amount_mean_3D": _per_row(df, "amount", _entity_window(3))},
                        index=df.index)


def calendar(df):
    t = df["time"].dt
    return pd.DataFrame({"hour": t.hour, "weekday": t.day_name(), "weekend": t.day_of_week >= 5,
                         "days_since_2024": (df["time"] - pd.Timestamp("2024-01-01")).dt.days})


def from_keys(df):
    return pd.DataFrame({"is_web": df["category"] == "web",
                         "entity_id": df["entity"].str[1:].astype(int),
                         "entity_web": df["entity"] + "/" + df["category"]})


def earlier_events(df):
    t, e = df["time"].to_numpy(), df["entity"].to_numpy()
    count, hours = [], []
    for i in range(len(df)):
        earlier = t[(e == e[i]) & (t < t[i])]
        count.append(len(earlier))
        hours.append((t[i] - earlier.max()) / np.timedelta64(1, "h") if len(earlier) else np.nan)
    return pd.DataFrame({"earlier_events": count, "hours_since_last": hours}, index=df.index)


def point_in_time_target_encoding(df):
    def pick(columns, i):
        t, c = columns["time"], columns["category"]
        return (c == c[i]) & (t < t[i])
    return pd.DataFrame({"category_rate_so_far": _per_row(df, "target", pick)}, index=df.index)


def previous_notes(df):
    """The notes of the entity's latest strictly earlier timestamp, as text; missing at first."""
    t, e, note = df["time"].to_numpy(), df["entity"].to_numpy(), df["note"].to_numpy()
    out = []
    for i in range(len(df)):
        earlier = (e == e[i]) & (t < t[i])
        latest = earlier & (t == t[earlier].max()) if earlier.any() else earlier
        out.append(",".join(sorted(note[latest])) or None)
    return pd.DataFrame({"previous_notes": out}, index=df.index)


def sorted_output(df):
    """A clean feature, returned in time order rather than in df's order."""
    out = point_in_time_mean(df)
    return out.loc[df.sort_values("time", kind="stable").index]


def mixed(df):
    """Clean and leaky columns side by side."""
    return pd.concat([calendar(df)[["hour"]], centered_window(df), earlier_events(df),
                      own_value(df), from_keys(df)[["is_web"]]], axis=1)


def label_first(df):
    """Leaky columns in reverse alphabetical order, a clean one between them."""
    return pd.concat([own_value(df), calendar(df)[["hour"]], centered_window(df)], axis=1)


LEAKY = [
    ("a centered window", centered_window, ["amount_centered_3"]),
    ("a rolling mean that includes the row itself", missing_shift, ["amount_mean_3"]),
    ("shift(1) that lets same-timestamp rows see each other", shift_one_row,
     ["amount_prev_mean_3"]),
    ("a target encoding over all rows", target_encoding_all_rows, ["category_rate"]),
    ("a normalization fitted on the whole column", normalization_whole_column, ["amount_z"]),
    ("a copy of the row's own target", own_value, ["label"]),
    ("a time window closed on the right", right_closed_time_window, ["amount_mean_2D"]),
    ("the time until the entity's next event", hours_to_next_event, ["hours_to_next"]),
    ("the entity's total row count", entity_row_count, ["entity_rows"]),
    ("the leaky columns of a mixed pipeline", mixed, ["amount_centered_3", "label"]),
]

# Run on typed_log(): leaks that only a detector changing every value of every column can see.
TYPED_LEAKY = [
    ("the own text value of an entity that always has the smaller one", side_of("u1"),
     ["side_of_u1"]),
    ("the own text value of an entity that always has the larger one", side_of("u2"),
     ["side_of_u2"]),
    ("the own note where it is x, missing elsewhere", note_if_x, ["note_if_x"]),
    ("the final amounts copied into a mid-way snapshot", final_amount_at_snapshot,
     ["final_amount"]),
]

CLEAN = [
    ("a point-in-time rolling mean", point_in_time_mean),
    ("hour, weekday and other features of the row's own time", calendar),
    ("features of the row's keys", from_keys),
    ("counts and gaps over strictly earlier events", earlier_events),
    ("a point-in-time target encoding", point_in_time_target_encoding),
    ("a clean feature returned in another row order", sorted_output),
]

TYPED_CLEAN = [
    ("the notes of the latest earlier timestamp, missing at first", previous_notes),
]
