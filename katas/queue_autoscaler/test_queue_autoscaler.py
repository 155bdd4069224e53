"""Visible examples. `pytest katas/queue_autoscaler` also runs the hidden suite on your file."""


def run(scaler, calls):
    return [scaler.observe(*call) for call in calls]


def test_stable_mode_example_from_the_prompt(impl):
    s = impl.QueueAutoscaler(target=2, max_replicas=10, stable_window_s=10)
    assert s.replicas == 1
    assert run(s, [(0, 3, 1), (4, 10, 2), (10, 0, 0), (14, 0, 0)]) == [2, 4, 3, 1]
    assert s.replicas == 1


def test_panic_mode_example_from_the_prompt(impl):
    s = impl.QueueAutoscaler(target=1, max_replicas=100, stable_window_s=8, panic_window_s=2)
    got = [(s.observe(*call), s.panicking) for call in
           [(0, 1, 0), (1, 1, 0), (2, 9, 0), (3, 9, 0), (4, 0, 2), (10, 0, 0), (10.5, 0, 0)]]
    assert got == [(1, False), (1, False), (5, True), (9, True), (9, True), (9, True),
                   (4, False)]


def test_cold_start_and_scale_to_zero_example_from_the_prompt(impl):
    s = impl.QueueAutoscaler(target=1, max_replicas=10, min_replicas=0, stable_window_s=1,
                             startup_s=5, idle_grace_s=4)
    assert run(s, [(0, 0, 0), (1, 2, 1)]) == [0, 3]
    assert (s.ready(5.5), s.ready(6)) == (0, 3)
    assert run(s, [(3, 0, 0), (5, 0, 0), (5.5, 0, 0)]) == [1, 1, 0]
