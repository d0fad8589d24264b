import time

from determined import core


def test_should_preempt_turns_true_and_acks(on_cluster):
    m = on_cluster
    with core.init() as ctx:
        assert ctx.preempt.should_preempt() is False
        # the first poll is non-blocking, the following ones long-poll
        m.wait_for(lambda: any(r.query.get("timeoutSeconds") == "60" for r in m.requests_to("preemption")))
        first = m.requests_to("preemption")[0]
        assert first.query["timeoutSeconds"] == "0"
        m.set_preempt()
        deadline = time.monotonic() + 10
        while not ctx.preempt.should_preempt():
            assert time.monotonic() < deadline, "should_preempt() never turned True"
            time.sleep(0.01)
        assert ctx.preempt.should_preempt() is True
    assert m.acks == 1
    assert m.requests_to("ack_preemption")[0].method == "POST"


def test_no_auto_ack(on_cluster):
    m = on_cluster
    m.preempt = True
    with core.init() as ctx:
        assert ctx.preempt.should_preempt(auto_ack=False) is True
        assert m.acks == 0
        ctx.preempt.acknowledge_preemption_signal()
    assert m.acks == 1


def test_preemption_endpoint_missing_means_false(on_cluster):
    on_cluster.reject[r"GET /api/v1/allocations/.*/signals/preemption"] = (
        404, {"error": {"code": 5, "reason": "NotFound", "error": "no"}}
    )
    with core.init() as ctx:
        assert ctx.preempt.should_preempt() is False
