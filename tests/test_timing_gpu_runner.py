"""The GPU runner's timing on a virtual GPU clock (tests/fakes/fake_cuda.py): every entry of a cell
on the same buffers, one sample size for all, samples long enough that launching a graph costs
nothing, inputs rotated past the L2, and do_bench's per-launch procedure without the flush."""
from __future__ import annotations

import pytest

from fakes.fake_cuda import FakeCuda, FakeTensor, FakeTorch
from irlab.timing.gpu import MAX_LAUNCHES, SAMPLE_MS, GpuRunner, Prepared
from irlab.timing.plan import Cell, Entry, Plan

MIB = 2 ** 20


class Problem:
    """A kernel of ``us`` microseconds on inputs of ``mib`` MiB; every set of inputs made is
    counted, so a test sees which buffers an entry launches on."""

    def __init__(self, cuda: FakeCuda, mib: float):
        self.cuda, self.nbytes, self.made = cuda, int(mib * MIB), 0

    def make(self):
        self.made += 1
        return {"x": FakeTensor(self.nbytes, self.made - 1), "n": 7}


def runner_and_entries(us: float, mib: float, labels=("baseline", "again"), replay_launch_us=20.0):
    cuda = FakeCuda(replay_launch_us=replay_launch_us)
    runner = GpuRunner(torch=FakeTorch(cuda))
    problem = Problem(cuda, mib)
    cell = Cell("t", "k", {"N": 1}, "c", [Entry(label) for label in labels])
    entries = []
    for entry in cell.entries:   # what prepare does for a kernel: the cell's workload, a launch bound to inputs
        workload = runner._workload(cell, cell.shape, problem.make, lambda inp: {"x": inp["x"]})
        entries.append(Prepared(entry, cell.shape, lambda inp, name=entry.label: cuda.kernel(name, us, inp["x"].copy),
                                None, 0.0, {}, workload))
    return cuda, runner, problem, entries


def test_every_entry_of_a_cell_launches_on_the_same_buffers():
    cuda, runner, problem, (base, again) = runner_and_entries(us=40.0, mib=200)
    plan = Plan([], "graph")
    n = runner.launches_per_sample(base, plan)
    control = runner.again(base)
    for p in (base, again, control):
        runner.time(p, plan, n)
    by_entry = {}
    for name, copy in cuda.launched:
        by_entry.setdefault(name, set()).add(copy)
    assert by_entry["baseline"] == by_entry["again"] == {0, 1}   # 200 MiB: two copies pass 2x the 50 MiB L2
    assert problem.made == 2 and base.workload is again.workload
    assert control.graphs[n] is not base.graphs[n]   # the A/A control: the same launches, its own graph


@pytest.mark.parametrize("us,mib", [(3.0, 4), (40.0, 96), (5000.0, 900)])
def test_a_sample_fills_about_10_ms_in_whole_rotations_and_launching_the_graph_costs_nothing(us, mib):
    cuda, runner, problem, (base, _) = runner_and_entries(us=us, mib=mib)
    plan = Plan([], "graph")
    n = runner.launches_per_sample(base, plan)
    copies = len(base.workload.copies)
    assert copies * mib * MIB >= 2 * runner.l2_bytes or copies == 1
    assert n % copies == 0 and n <= MAX_LAUNCHES + copies
    assert n * us / 1000 >= SAMPLE_MS or n >= MAX_LAUNCHES
    # the 20 us the CPU takes to launch the graph is hidden behind the busy-wait: the sample is the kernel's
    assert runner.time(base, plan, n) == pytest.approx(us / 1000, rel=1e-9)


def test_without_the_busy_wait_a_microsecond_sample_would_carry_the_graph_launch(monkeypatch):
    cuda, runner, problem, (base, _) = runner_and_entries(us=3.0, mib=4)
    plan = Plan([], "graph")
    n = runner.launches_per_sample(base, plan)
    monkeypatch.delattr(FakeCuda, "_sleep")
    assert runner.time(base, plan, n) == pytest.approx(0.003 + 0.020 / n, rel=1e-9)
    assert 0.020 / n < 0.003 * 0.01   # and even then, ~10 ms samples make it < 1% of a 3 us kernel


def test_a_plan_s_launches_are_used_as_given_for_every_entry():
    cuda, runner, problem, (base, again) = runner_and_entries(us=3.0, mib=4)
    plan = Plan([], "graph", launches=50)
    assert runner.launches_per_sample(base, plan) == 50
    runner.time(again, plan, 50)
    # each copy once before capture, the replay that follows it, the sample
    assert sum(1 for name, _ in cuda.launched if name == "again") == len(again.workload.copies) + 50 + 50


def test_do_bench_times_each_launch_after_a_flush_and_takes_the_median():
    cuda, runner, problem, (base, _) = runner_and_entries(us=3.0, mib=4)
    plan = Plan([], "do_bench")
    n = runner.launches_per_sample(base, plan)
    assert n == 1000   # 100 ms at 83 us per flushed launch, at most 1000
    assert runner.time(base, plan, 200) == pytest.approx(0.003)
    assert problem.made == 1 and {copy for _, copy in cuda.launched} == {0}   # flushed: no copies needed
    assert "flushed" in base.info["l2"]


def test_a_new_cell_gets_new_buffers():
    cuda, runner, problem, (base, _) = runner_and_entries(us=3.0, mib=4)
    other = Cell("t", "k", {"N": 1}, "c2", [Entry("baseline")])
    assert runner._workload(other, other.shape, problem.make, lambda inp: {"x": inp["x"]}) is not base.workload
