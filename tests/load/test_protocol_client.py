"""The protocol client without a Streamlit server: the BackMsg it sends, the ForwardMsgs it reads (built here with
Streamlit's own protobuf classes and Plotly's JSON, as the server writes them), and one whole session against a
small websocket server of this test's own."""

from __future__ import annotations

from http import HTTPStatus

import numpy as np
import plotly.graph_objects as go
import plotly.io
import pytest
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.server import serve

from tests.load import protocol_client as pc

QUERY = "run=1&cell=gru"


def new_session() -> ForwardMsg:
    msg = ForwardMsg()
    msg.new_session.page_script_hash = "explore-hash"
    return msg


def element(path: list[int]) -> tuple[ForwardMsg, object]:
    msg = ForwardMsg()
    msg.metadata.delta_path[:] = path
    return msg, msg.delta.new_element


def progress(path: list[int], step: int, steps: int = 300) -> ForwardMsg:
    msg, el = element(path)
    el.progress.value = int(100 * step / steps)
    el.progress.text = f"step {step} / {steps} · 120 steps/s"
    return msg


def alert(path: list[int], body: str, format: int) -> ForwardMsg:
    msg, el = element(path)
    el.alert.body, el.alert.format = body, format
    return msg


def loss_chart(path: list[int], steps: int, title: str = "Loss") -> ForwardMsg:
    """A loss chart as Streamlit writes it: ``plotly.io.to_json`` (NumPy arrays become base64 typed arrays)."""
    x = np.arange(1, steps + 1)
    figure = go.Figure([go.Scatter(x=x, y=np.exp(-x / 100.0), name="training loss"),
                        go.Scatter(x=[0, max(steps, 1)], y=[1 / 6, 1 / 6], name="memoryless baseline 0.1667")])
    figure.update_layout(title=dict(text=f"<b>{title}</b>"))
    msg, el = element(path)
    el.plotly_chart.spec = plotly.io.to_json(figure, validate=False)
    return msg


def block(path: list[int]) -> ForwardMsg:
    msg = ForwardMsg()
    msg.metadata.delta_path[:] = path
    msg.delta.add_block.vertical.SetInParent()
    return msg


def finished(status: int = ForwardMsg.FINISHED_SUCCESSFULLY) -> ForwardMsg:
    msg = ForwardMsg()
    msg.script_finished = status
    return msg


def recorded_run() -> list[ForwardMsg]:
    """A preset link's session: an untrained chart, training, "Finished", the rerun that redraws the page."""
    return [new_session(), progress([0, 3], 0), block([0, 7]), loss_chart([0, 7, 0], 0),
            alert([0, 6], "All 2 slots of this server are busy (2 running, 1 waiting). You are number 1 in the "
                          "queue; your job starts by itself.", Alert.INFO),
            alert([0, 6], "", Alert.INFO), progress([0, 3], 150), block([0, 7]), loss_chart([0, 7, 0], 150),
            progress([0, 3], 300), alert([0, 4], "Finished 300 steps.", Alert.SUCCESS), block([0, 7]),
            loss_chart([0, 7, 0], 300), finished(ForwardMsg.FINISHED_EARLY_FOR_RERUN),
            new_session(), progress([0, 3], 300), alert([0, 4], "Finished 300 steps.", Alert.SUCCESS),
            block([0, 7]), loss_chart([0, 7, 0], 300), finished()]


def feed(messages: list[ForwardMsg]) -> tuple[pc.SessionResult, int]:
    """Feed the messages' bytes at 1 s intervals; the result and how many were read before it was done."""
    result = pc.SessionResult(url="http://127.0.0.1:1/explore")
    recorder = pc.Recorder(result)
    for i, msg in enumerate(messages):
        data = msg.SerializeToString()
        if recorder.feed(ForwardMsg.FromString(data), float(i + 1), len(data)):
            return result, i + 1
    return result, len(messages)


def test_rerun_message_names_the_page_by_its_url_path_and_carries_the_query():
    sent = BackMsg.FromString(pc.rerun_message("?" + QUERY, "/explore/", "http://127.0.0.1:8501/explore?"
                                               + QUERY).SerializeToString())
    assert sent.WhichOneof("type") == "rerun_script"
    state = sent.rerun_script
    assert (state.query_string, state.page_name, state.page_script_hash) == (QUERY, "explore", "")
    assert state.HasField("widget_states") and not state.widget_states.widgets
    assert state.context_info.url.endswith("/explore?" + QUERY) and state.context_info.timezone == "UTC"
    assert not state.is_auto_rerun and not state.fragment_id and not state.cached_message_hashes
    main = pc.rerun_message({"run": "1", "seed": "101"}, "").rerun_script
    assert (main.query_string, main.page_name) == ("run=1&seed=101", "")
    known = pc.rerun_message("", "explore", page_script_hash="abc").rerun_script
    assert (known.page_script_hash, known.page_name) == ("abc", "")


def test_a_recorded_preset_run_is_read_as_the_browser_shows_it():
    result, read = feed(recorded_run())
    assert read == len(recorded_run())  # done at the last script_finished, not at the first "Finished"
    assert result.first_progress_s == 7 and result.first_chart_s == 9  # the chart after "step 150 / 300"
    assert result.finished_s == 11 and result.finished_steps == 300 and result.completed_s == 20
    assert result.charts_received == 4 and result.script_runs == 2
    assert result.queued and "slots of this server are busy" in result.queue_texts[0]
    assert result.ok and not result.errors and not result.warnings
    assert result.final_charts == [pc.Chart("Loss", {"training loss": 300, "memoryless baseline 0.1667": 2})]
    assert result.chart("Loss").points["training loss"] == 300
    assert result.chart("Loss").last["training loss"] == pytest.approx(np.exp(-3.0))


def test_a_chart_with_loss_points_counts_as_trained_without_a_progress_text():
    result, _ = feed([new_session(), loss_chart([0, 1], 0), loss_chart([0, 1], 5), loss_chart([0, 2], 5, "Other")])
    assert result.first_chart_s == 3 and result.first_progress_s is None


def test_a_finished_run_drops_what_it_did_not_redraw_and_a_new_element_replaces_a_block():
    messages = [new_session(), block([0, 2]), loss_chart([0, 2, 0], 10), loss_chart([0, 2, 1], 10, "Carry"),
                loss_chart([0, 5], 1, "Old"), finished(ForwardMsg.FINISHED_EARLY_FOR_RERUN), new_session(),
                block([0, 2]), loss_chart([0, 2, 0], 20), alert([0, 3], "Finished 20 steps.", Alert.SUCCESS),
                finished()]
    result, _ = feed(messages)
    assert [c.title for c in result.final_charts] == ["Loss"]
    page = pc.Page()
    for msg in [block([0, 2]), loss_chart([0, 2, 0], 3)]:
        page.apply(msg)
    placeholder, empty = element([0, 2])
    empty.empty.SetInParent()
    page.apply(placeholder)
    assert page.charts() == [] and page.nodes[(0, 2)].kind == "empty"


def test_errors_exceptions_and_a_run_that_ends_without_finished_are_reported():
    msg, el = element([0, 1])
    el.exception.type, el.exception.message = "ValueError", "boom"
    result, _ = feed([new_session(), msg, alert([0, 2], "Out of memory.", Alert.ERROR),
                      alert([0, 3], "Some settings in the link could not be used", Alert.WARNING), finished()])
    assert not result.ok and result.completed_s is None
    assert result.errors == ["exception ValueError: boom", "error shown: Out of memory."]
    assert result.warnings == ["Some settings in the link could not be used"]
    idle, _ = feed([new_session(), progress([0, 1], 0), finished()])
    assert idle.errors == ["the script run ended and the page shows no 'Finished N steps.'"]
    compile_error, read = feed([new_session(), finished(ForwardMsg.FINISHED_WITH_COMPILE_ERROR), new_session()])
    assert read == 2 and compile_error.errors == ["the script did not compile"]


def test_read_chart_counts_lists_and_typed_arrays():
    spec = '{"data": [{"x": [1, 2, 3], "name": "a"}, {"y": {"dtype": "f8", "bdata": "AAAAAAAA8D8AAAAAAAAAQA=="}}],' \
           ' "layout": {"title": "Loss<br>per step"}}'
    chart = pc.read_chart(spec)
    assert chart == pc.Chart("Loss per step", {"a": 3, "trace 1": 2}) and chart.last == {"a": None, "trace 1": 2.0}
    assert pc.trace_values({"dtype": "i4", "bdata": "AQAAAAIAAAADAAAABAAAAA==", "shape": "2, 2"}).shape == (2, 2)


@pytest.mark.parametrize("base", ["http://10.0.0.2:8501", "http://example.com", "https://127.0.0.1:8501",
                                  "http://127.0.0.1.example.com:8501", "http://0.0.0.0:8501"])
def test_only_loopback_servers_are_accepted(base: str, capsys):
    with pytest.raises(ValueError, match="only connects to a server on this machine"):
        pc.loopback_base(base)
    assert pc.main(["--base", base, "--sessions", "1"]) == 2
    assert "only connects to a server on this machine" in capsys.readouterr().err


def test_loopback_addresses_and_links():
    assert pc.loopback_base("http://localhost:8501/")[3] == "http://localhost:8501"
    assert pc.loopback_base("http://127.0.0.2:9000/app")[1:] == ("/app", 9000, "http://127.0.0.2:9000/app")
    assert pc.loopback_base("http://[::1]:8501")[3] == "http://[::1]:8501"
    assert pc.split_link("http://127.0.0.1:8501/app", "http://127.0.0.1:8501/app/explore?run=1") == ("explore",
                                                                                                      "run=1")
    with pytest.raises(ValueError):
        pc.split_link("http://127.0.0.1:8501", "http://192.168.0.9:8501/explore?run=1")


def test_summary_percentiles_and_groups():
    results = [pc.SessionResult(url="u", group="same", connected_s=1.0, first_chart_s=1.0 + i, completed_s=10.0 + i,
                                finished_s=9.0) for i in range(5)]
    results.append(pc.SessionResult(url="u", group="distinct", errors=["timed out after 5 s: never connected"]))
    summary = pc.summarise(results)
    assert summary["sessions"] == 6 and summary["completed"] == 5 and summary["with_errors"] == 1
    assert summary["server_answer_p50_s"] == 2.0 and summary["completion_p95_s"] == 13.8
    assert summary["groups"]["distinct"]["connect_p50_s"] is None
    assert summary["errors"] == ["timed out after 5 s: never connected"]


def test_a_closed_port_is_an_error_not_a_hang():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens on it once closed
    result = pc.run_apart(pc.open_session(f"http://127.0.0.1:{port}", QUERY, "explore", timeout_s=5))
    assert not result.ok and result.connected_s is None and result.errors[0].startswith("connection: ")


def test_a_whole_session_against_a_small_server_speaking_the_protocol():
    """The page, the probes (one sets the XSRF cookie), the handshake (subprotocols with the token, the cookie,
    Origin) and the rerun_script reach the server as a tab sends them; the recorded run's messages come back and
    end the session."""
    seen: dict = {"gets": []}
    token = "2|0a1b|2c3d|1764850000"

    def answer_gets(connection, request):
        if request.path == "/" + pc.STREAM_PATH:
            seen["origin"], seen["cookie"] = request.headers.get("Origin"), request.headers.get("Cookie")
            seen["subprotocols"] = request.headers.get("Sec-WebSocket-Protocol")
            return None
        seen["gets"].append((request.path, request.headers.get("Cookie")))
        response = connection.respond(HTTPStatus.OK, "ok")
        if request.path.endswith("/health"):
            response.headers["Set-Cookie"] = f"{pc.XSRF_COOKIE}={token}; Path=/; SameSite=Lax"
        return response

    async def handler(socket):
        seen["rerun"] = BackMsg.FromString(await socket.recv()).rerun_script
        for msg in recorded_run():
            await socket.send(msg.SerializeToString())
        await socket.wait_closed()

    async def scenario() -> list[pc.SessionResult]:
        async with serve(handler, "127.0.0.1", 0, subprotocols=["streamlit"], process_request=answer_gets) as server:
            port = server.sockets[0].getsockname()[1]
            urls, groups = pc.session_urls(f"http://127.0.0.1:{port}", 2, "half")
            return [await pc.run_class(f"http://127.0.0.1:{port}", urls[:1], 1, 20, groups[:1]),
                    await pc.run_class(f"http://127.0.0.1:{port}", urls, 2, 20, groups)]

    first, both = pc.run_apart(scenario())
    assert all(r.ok for r in first + both) and [r.group for r in both] == ["same", "distinct"]
    assert both[0].connected_s < both[0].first_chart_s < both[0].completed_s
    assert seen["gets"][:3] == [("/explore?run=1", None), ("/_stcore/health", None),
                                ("/_stcore/host-config", f"{pc.XSRF_COOKIE}={token}")]
    assert seen["origin"].startswith("http://127.0.0.1:") and seen["cookie"] == f"{pc.XSRF_COOKIE}={token}"
    assert seen["subprotocols"] == f"streamlit, {token}"
    assert seen["rerun"].page_name == "explore" and "run=1" in seen["rerun"].query_string


def titled_chart(path: list[int], title: str, points: int) -> ForwardMsg:
    """A chart titled ``title`` with one line of ``points`` points, as Streamlit writes it."""
    figure = go.Figure(go.Scatter(x=np.arange(points), y=np.ones(points), name="GRU"))
    figure.update_layout(title=dict(text=title))
    msg, el = element(path)
    el.plotly_chart.spec = plotly.io.to_json(figure, validate=False)
    return msg


@pytest.mark.parametrize("page, title, other", [
    ("gradients", "Gradient reaching the initial carry against sequence length",
     "Gradient of the loss with respect to the carry at each time step"),
    ("compare", "Training loss: mean and spread over seeds", "Final evaluation loss per configuration")])
def test_a_page_whose_result_is_one_chart_ends_at_that_chart_in_every_language(page, title, other):
    from rnnlab.i18n import _, using

    for lang in ("en", "zh", "ru"):
        with using(lang):
            shown, before = _(title), _(other)
        result = pc.SessionResult(url=f"http://127.0.0.1:1/{page}")
        recorder = pc.Recorder(result, pc.RESULT_CHARTS[page])
        messages = [new_session(), titled_chart([0, 1], before, 20), titled_chart([0, 2], shown, 0),
                    titled_chart([0, 2], shown, 5), finished()]
        done = [recorder.feed(m, float(i + 1)) for i, m in enumerate(messages)]
        assert done == [False, False, False, False, True]
        assert result.first_chart_s == result.finished_s == 4  # the first one with points, not an empty one
        assert result.completed_s == 5 and result.ok and result.finished_steps is None
        missing = pc.SessionResult(url=f"http://127.0.0.1:1/{page}")
        lacking = pc.Recorder(missing, pc.RESULT_CHARTS[page])
        for i, m in enumerate([new_session(), titled_chart([0, 1], before, 20), finished()]):
            lacking.feed(m, float(i))
        assert not missing.ok and missing.errors == ["the script run ended and the page shows no result chart"]


def test_every_session_on_one_link_in_its_language():
    urls, groups = pc.link_urls("http://127.0.0.1:8501/", 3, "/compare?run=1&lang=ru", "zh")
    assert urls == ["http://127.0.0.1:8501/compare?run=1&lang=zh"] * 3 and groups == ["same"] * 3
    assert pc.split_link("http://127.0.0.1:8501", urls[0]) == ("compare", "run=1&lang=zh")
    assert pc.link_urls("http://localhost:8501", 1, "gradients")[0] == ["http://localhost:8501/gradients"]
    with pytest.raises(ValueError):
        pc.link_urls("http://example.com:8501", 1, "compare?run=1")
