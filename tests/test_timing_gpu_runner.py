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
    assert control.graphs[(n, None)] is not base.graphs[(n, None)]   # the A/A control: its own graph


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


class FakeArenas:
    """irlab.timing.placement.Arenas on the virtual GPU: a placed input set is a buffer named by its
    block and place, and every refill is counted."""

    def __init__(self):
        self.blocks, self.fills = 0, []

    def span(self, inputs):
        return inputs["x"].nbytes

    def block(self, nbytes):
        self.blocks += 1
        return f"block{self.blocks - 1}"

    def place(self, pristine, block, offset):
        return {"x": FakeTensor(pristine["x"].nbytes, f"{block}@{offset}"), "n": pristine["n"]}

    def fill(self, placed, pristine):
        self.fills.append(placed["x"].copy)


def rotating_cell(us=40.0, mib=200):
    """A cell whose baseline reads the cell's inputs and whose ``reference`` entry reads inputs of
    its own (another kernel's arguments), plus the A/A control."""
    cuda = FakeCuda()
    runner = GpuRunner(torch=FakeTorch(cuda))
    runner.arenas = FakeArenas()
    cell = Cell("t", "k", {"N": 1}, "c", [Entry("baseline"), Entry("reference", kernel="other")])
    made = {"cell": Problem(cuda, mib), "reference": Problem(cuda, mib)}
    entries = []
    for entry, owner in zip(cell.entries, (None, "other")):
        problem = made["reference" if owner else "cell"]
        w = runner._workload(cell, cell.shape, problem.make, lambda inp: {"x": inp["x"]}, owner)
        entries.append(Prepared(entry, cell.shape, lambda inp, name=entry.label: cuda.kernel(name, us, inp["x"].copy),
                                None, 0.0, {}, w))
    base, ref = entries
    return cuda, runner, made, base, ref, runner.again(base)


@pytest.mark.parametrize("method", ["graph", "do_bench"])
def test_entries_with_inputs_of_their_own_take_turns_in_memory_round_by_round(method):
    cuda, runner, made, base, ref, control = rotating_cell()
    plan = Plan([], method, launches=4)
    where = {}
    for r in range(6):
        runner.begin_round(r)
        for p, name in ((ref, "reference"), (base, "baseline"), (control, "control")):
            cuda.launched.clear()
            runner.time(p, plan, 4)
            where.setdefault(name, []).append({buf.split("@")[0] for _, buf in cuda.launched})
    for r in range(6):
        assert len(where["baseline"][r]) == len(where["reference"][r]) == 1           # one block a round
        assert where["baseline"][r] != where["reference"][r]                           # never the same one
        assert where["control"][r] == where["baseline"][r]                             # the A/A pair: the same
    blocks = [next(iter(b)) for b in where["baseline"]]
    assert blocks == ["block0", "block1"] * 3 and runner.arenas.blocks == 2            # each block, equally often
    assert made["cell"].made == made["reference"].made == 1    # one set each: the placed copies come from it
    assert "rotated" in base.info["placement"]
    assert len(runner.arenas.fills) >= 4     # each group's data copied into its block at every round after the first


def test_a_cell_whose_entries_share_their_inputs_never_rotates():
    cuda, runner, problem, (base, again) = runner_and_entries(us=40.0, mib=200)
    runner.arenas = FakeArenas()
    plan = Plan([], "graph", launches=4)
    for r in range(3):
        runner.begin_round(r)
        runner.time(base, plan, 4)
        runner.time(again, plan, 4)
    assert runner.arenas.blocks == 0 and "placement" not in base.info
    assert {copy for _, copy in cuda.launched} == {0, 1}


def test_a_reference_kernel_reads_the_cells_tensors_when_its_inputs_are_the_same(monkeypatch):
    """A copy of the kernel file (another make_inputs function, the same inputs) shares the cell's
    tensors; a kernel whose inputs differ gets its own; the calibration's control always does."""
    torch = pytest.importorskip("torch", reason="the runner's inputs are torch tensors (CPU here)")
    from types import SimpleNamespace
    import irlab.timing.gpu as gpu

    def inputs(shape, device, seed=0, scale=1.0):
        g = torch.Generator().manual_seed(seed)
        return {"x": torch.randn(64, generator=g) * scale, "y": torch.empty(64), "n": 64}
    def spec(make, writes="y"):
        return SimpleNamespace(make_inputs=make, output_tensors=lambda inp: {"output": inp[writes]})
    specs = {"cell": spec(inputs),   # its output "y" is torch.empty: what it holds before the launch differs
             "copy": spec(lambda shape, device, seed=0: inputs(shape, device, seed)),
             "other": spec(lambda shape, device, seed=0: inputs(shape, device, seed, 2.0)),
             "writes x": spec(lambda shape, device, seed=0: inputs(shape, device, seed), writes="x")}
    monkeypatch.setattr(gpu, "get", lambda ref: specs[ref])
    runner = GpuRunner(torch=FakeTorch(FakeCuda()))
    runner.torch, runner.device = torch, "cpu"
    cell = Cell("t", "cell", {"N": 64}, "c", [])
    tensors = lambda inp: {k: v for k, v in inp.items() if torch.is_tensor(v)}   # noqa: E731

    def owner(entry):
        spec = specs[entry.kernel or "cell"]
        return runner._inputs_owner(cell, entry, spec, cell.shape, lambda: spec.make_inputs(cell.shape, "cpu", 1),
                                    tensors)
    assert owner(Entry("baseline")) == (None, None)
    assert owner(Entry("reference", kernel="copy")) == (None, None)
    who, first = owner(Entry("reference", kernel="other"))
    assert who == "other" and torch.equal(first["x"], specs["other"].make_inputs({}, "cpu", 1)["x"])
    assert owner(Entry("reference", kernel="writes x"))[0] == "writes x"   # it would overwrite the cell's input
    assert owner(Entry("own inputs", inputs="own")) == ("own:own inputs", None)
