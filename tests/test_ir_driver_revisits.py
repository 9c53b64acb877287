"""The greedy driver's worklist: after a rewrite, the users of the rewritten op are visited again,
also where they live in another block (a loop body), so a pattern that a rewrite enables there
still runs. Their own block's ops are queued anyway; a user in a nested region is reached only
through the use."""
from __future__ import annotations

from irlab import ir
from irlab.ir import RewritePattern, apply_patterns

NESTED_USER = """module {
  tt.func @f(%n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %x = arith.addi %n, %n : i32
    scf.for %i = %c0 to %n step %c1  : i32 {
      %y = arith.muli %x, %i : i32
    }
    tt.return
  }
}
"""


class TwoSteps(RewritePattern):
    """Rewrites %x twice (irlab.step = 1, then 2): the second step happens after %y's first visit."""
    ops = ("arith.addi",)

    def match_and_rewrite(self, op, rw):
        step = op.attributes.get("irlab.step", 0)
        if step < 2:
            rw.set_attribute(op, "irlab.step", f"{step + 1} : i32", reason="one more step")


class FollowsFinishedProducer(RewritePattern):
    """Marks a muli once the op that defines its first operand has taken both steps."""
    ops = ("arith.muli",)

    def match_and_rewrite(self, op, rw):
        producer = op.operands[0].defining_op
        if producer is None or producer.attributes.get("irlab.step") != 2:
            return rw.notify_match_failure(op, "its producer is not finished")
        if "irlab.seen" not in op.attributes:
            rw.set_attribute(op, "irlab.seen", "unit", reason="the producer finished")


def test_a_rewrite_requeues_the_users_of_the_rewritten_op_in_a_nested_block():
    m = ir.parse(NESTED_USER)
    res = apply_patterns(m, [TwoSteps(), FollowsFinishedProducer()])
    x, y = m.first("arith.addi"), m.first("arith.muli")
    assert x.attributes["irlab.step"] == 2
    assert "irlab.seen" in y.attributes, "the user in the loop body was not visited again after %x's last rewrite"
    assert res.changed and res.rewrites == 3, res.rewrites
    assert res.declines == []   # its earlier refusal was overtaken by the rewrite
