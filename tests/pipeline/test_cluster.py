"""Clustering: same defect across reps → one cluster, different defects apart, deterministic.

The labelled pairs below are how the thresholds were chosen (``docs/clustering.md``): each pair
is two reviewers' reports on nearby lines of one file, either the same defect in other words or
two different defects. They are deliberately hard: paraphrases that share few words, and
different defects that share the code identifiers of the line they are on.
"""

from __future__ import annotations

import random
import time
from typing import NamedTuple

from assay.model import Claim, ClaimKind, Finding, FindingSource, Severity, Side
from assay.pipeline.cluster import Cluster, cluster_findings, normalize_path


class Pair(NamedTuple):
    title_a: str
    evidence_a: str
    title_b: str
    evidence_b: str
    same: bool
    lang: str


def _finding(
    title: str,
    *,
    rep: int | None = 0,
    line: int = 10,
    end_line: int | None = None,
    path: str = "app/stats.py",
    evidence: str = "",
    severity: Severity = Severity.P2,
    side: Side = Side.RIGHT,
    category: str = "correctness",
) -> Finding:
    return Finding(
        severity=severity,
        category=category,
        title=title,
        path=path,
        line=line,
        end_line=end_line,
        side=side,
        evidence=evidence,
        rep=rep,
    )


def _static_f821(symbol: str = "summ", *, line: int = 9, lang: str = "en") -> Finding:
    title = (
        f"Undefined name `{symbol}` fails with NameError when this line runs"
        if lang == "en"
        else f"未定义名称 `{symbol}`，执行到此行必然抛出 NameError"
    )
    return Finding(
        severity=Severity.P0,
        category="correctness",
        title=title,
        path="app/stats.py",
        line=line,
        evidence=f"ruff F821 (undefined-name): Undefined name `{symbol}`\n"
        f"app/stats.py:{line}: `return {symbol}(items) / len(items)`",
        suggestion=f"Define or import `{symbol}`, or fix the spelling.",
        claims=(
            Claim(
                kind=ClaimKind.SYMBOL_UNDEFINED,
                text=f"`{symbol}` is not defined in app/stats.py",
                path="app/stats.py",
                needle=symbol,
            ),
        ),
        source=FindingSource.STATIC,
        rule="F821",
        certain_failure=True,
    )


def _reps(clusters: list[Cluster]) -> list[list[int | None]]:
    return [[member.rep for member in cluster.members] for cluster in clusters]


SAME_EN = [
    Pair(
        "Connection opened in run() is never closed",
        "app/db.py:12 assigns connect() to conn; no path closes it.",
        "conn = connect() leaks the database connection",
        "app/db.py:12 opens a connection with connect(); neither the normal return nor the "
        "exception path calls conn.close().",
        True,
        "en",
    ),
    Pair(
        "subprocess.run without timeout can hang server startup",
        "rtp_llm/config/server_config_setup.py:534 calls subprocess.run([...]) with no timeout; "
        "if run_affinity hangs, start_server never returns.",
        "load_gpu_nic_affinity: subprocess.run has no timeout, a hung run_affinity blocks startup",
        "server_config_setup.py:534 subprocess.run(cmd, capture_output=True) without timeout= "
        "blocks the ViT server start forever when the helper hangs.",
        True,
        "en",
    ),
    Pair(
        "Integer overflow when adding configured_timeout_ms and rpc_timeout_margin_ms",
        "MMRemoteOutputTransport.cc:16 computes configured_timeout_ms + rpc_timeout_margin_ms "
        "in int64 without a bound check.",
        "configured_timeout_ms + rpc_timeout_margin_ms can overflow int64",
        "MMRemoteOutputTransport.cc:16: the sum of two user-configured int64 values is not "
        "checked; signed overflow is undefined behaviour.",
        True,
        "en",
    ),
    Pair(
        "Race condition: counter incremented without holding the lock",
        "app/stats.py:40 `self.count += 1` runs outside `with self._lock:`.",
        "self.count += 1 is not protected by self._lock; concurrent requests lose updates",
        "app/stats.py:40 increments self.count outside the lock used everywhere else "
        "(app/stats.py:31).",
        True,
        "en",
    ),
    Pair(
        "SQL query built with an f-string allows SQL injection",
        'app/users.py:22 cursor.execute(f"SELECT * FROM users WHERE id = {user_id}").',
        "SQL injection: user_id is interpolated into the query string",
        "app/users.py:22 formats the untrusted user_id into the SQL text instead of passing "
        "it as a parameter.",
        True,
        "en",
    ),
    Pair(
        "Off-by-one: range(len(items) - 1) skips the last item",
        "app/batch.py:8 `for i in range(len(items) - 1):` never visits items[-1].",
        "Loop misses the final element because of range(len(items) - 1)",
        "app/batch.py:8 iterates range(len(items) - 1), so the last item is never processed.",
        True,
        "en",
    ),
    Pair(
        "json.loads error is not handled: a malformed body crashes the handler",
        "app/api.py:55 json.loads(request.body) raises JSONDecodeError on invalid input; "
        "nothing catches it.",
        "Malformed request body raises JSONDecodeError that surfaces as HTTP 500",
        "app/api.py:55 parses the body with json.loads without try/except; invalid JSON "
        "propagates out of handle().",
        True,
        "en",
    ),
    Pair(
        "File handle is not closed if parse() raises",
        "app/io.py:14 f = open(path) ... f.close() at app/io.py:18 is skipped when parse(f) "
        "raises.",
        "open() without a context manager leaks the file descriptor on error",
        "app/io.py:14 uses open(path) without `with`; an exception in parse(f) skips f.close().",
        True,
        "en",
    ),
    Pair(
        "Mutable default argument `cache={}` is shared between calls",
        "app/users.py:5 def get_user(user_id, cache={}): the dict persists across calls.",
        "Default dict for cache persists across calls to get_user",
        "app/users.py:5 get_user(user_id, cache={}) mutates its default argument.",
        True,
        "en",
    ),
    Pair(
        "Retry loop never sleeps and busy-spins the CPU",
        "app/client.py:70 `while True:` retries send() immediately after a failure.",
        "Missing backoff in the retry loop: it retries immediately in a tight loop",
        "app/client.py:70-76 retries send() with no delay between attempts.",
        True,
        "en",
    ),
    Pair(
        "proto_srcs is mandatory but flexlb_schedule_service_py does not pass it, so the "
        "build fails",
        "bazel/py_proto.bzl:12 declares proto_srcs = attr.label(mandatory=True); "
        "rtp_llm/cpp/model_rpc/proto/BUILD:85 does not set it.",
        "Build fails: flexlb_schedule_service_py is missing the mandatory proto_srcs attribute",
        'BUILD:85 generate_grpc_proto(name = "flexlb_schedule_service_py") lacks proto_srcs, '
        "which py_proto.bzl:12 makes mandatory.",
        True,
        "en",
    ),
    Pair(
        "Timeout passed in milliseconds where seconds are expected",
        "app/http.py:30 requests.get(url, timeout=timeout_ms) with timeout_ms = 5000.",
        "requests.get(timeout=timeout_ms) waits 5000 seconds instead of 5",
        "app/http.py:30 passes timeout_ms (milliseconds) to requests, which takes seconds.",
        True,
        "en",
    ),
    Pair(
        "Empty ACCL_NIC_GPU_AFFINITY is treated as already loaded",
        "server_config_setup.py:560 sets os.environ['ACCL_NIC_GPU_AFFINITY'] = '' and later "
        "checks `is not None`.",
        "`is not None` check misjudges an empty ACCL_NIC_GPU_AFFINITY as set",
        "server_config_setup.py:560-566: an empty string passes the `is not None` test, so "
        "the affinity is never loaded.",
        True,
        "en",
    ),
    Pair(
        "Missing await: asyncio.sleep(1) is never awaited",
        "app/worker.py:21 calls asyncio.sleep(1) without await; the coroutine is created and "
        "discarded.",
        "asyncio.sleep(1) without await does not wait and warns 'coroutine was never awaited'",
        "app/worker.py:21 `asyncio.sleep(1)` lacks `await`, so the loop does not pause.",
        True,
        "en",
    ),
]

DIFFERENT_EN = [
    Pair(
        "Connection opened in run() is never closed",
        "app/db.py:12 assigns connect() to conn; no path closes it.",
        "run() ignores the return value of go(fast=True)",
        "app/db.py:11 calls go(fast=True) and discards its result, which signals failure.",
        False,
        "en",
    ),
    Pair(
        "subprocess.run without timeout can hang server startup",
        "server_config_setup.py:534 calls subprocess.run([...]) with no timeout.",
        "subprocess.run return code is not checked; failures are silently ignored",
        "server_config_setup.py:534 subprocess.run(cmd) without check=True; a non-zero exit "
        "is ignored.",
        False,
        "en",
    ),
    Pair(
        "Integer overflow when adding configured_timeout_ms and rpc_timeout_margin_ms",
        "MMRemoteOutputTransport.cc:16 adds the two int64 values without a bound check.",
        "Negative configured_timeout_ms is not rejected",
        "MMRemoteOutputTransport.cc:14 accepts configured_timeout_ms < 0 and uses it as a "
        "deadline.",
        False,
        "en",
    ),
    Pair(
        "Race condition: counter incremented without holding the lock",
        "app/stats.py:40 `self.count += 1` runs outside `with self._lock:`.",
        "Lock acquired with acquire() is never released when flush() raises",
        "app/stats.py:42 self._lock.acquire(); flush() may raise before release() at "
        "app/stats.py:45.",
        False,
        "en",
    ),
    Pair(
        "SQL query built with an f-string allows SQL injection",
        'app/users.py:22 cursor.execute(f"SELECT * FROM users WHERE id = {user_id}").',
        "Database cursor is never closed",
        "app/users.py:21 cursor = conn.cursor() is not closed on any path.",
        False,
        "en",
    ),
    Pair(
        "Off-by-one: range(len(items) - 1) skips the last item",
        "app/batch.py:8 `for i in range(len(items) - 1):` never visits items[-1].",
        "items may be None, so len(items) raises TypeError",
        "app/batch.py:8 len(items) is called although process(items=None) is allowed by "
        "app/batch.py:3.",
        False,
        "en",
    ),
    Pair(
        "json.loads error is not handled: a malformed body crashes the handler",
        "app/api.py:55 json.loads(request.body) raises JSONDecodeError on invalid input.",
        "Content-Type is not checked before the body is parsed as JSON",
        "app/api.py:54 never reads request.headers['Content-Type'] before json.loads at "
        "app/api.py:55.",
        False,
        "en",
    ),
    Pair(
        "requests.get has no timeout",
        "app/http.py:30 requests.get(url) can block forever on a stalled server.",
        "requests.get response status is not checked",
        "app/http.py:31 uses response.json() without response.raise_for_status().",
        False,
        "en",
    ),
    Pair(
        "Password is logged in plain text",
        'app/auth.py:18 log.info(f"login {user} {password}").',
        "Log call formats its message eagerly with an f-string",
        'app/auth.py:18 log.info(f"...") builds the string even when INFO is disabled.',
        False,
        "en",
    ),
    Pair(
        "Division by zero when items is empty",
        "app/stats.py:9 returns summ(items) / len(items); len(items) is 0 for an empty list.",
        "Undefined name `summ` fails with NameError when this line runs",
        "ruff F821 (undefined-name): Undefined name `summ`\napp/stats.py:9: "
        "`return summ(items) / len(items)`",
        False,
        "en",
    ),
    Pair(
        "Cache key ignores the user id, so users see each other's data",
        'app/cache.py:12 key = f"profile:{page}" omits user_id.',
        "Cache entries never expire, so memory grows without bound",
        "app/cache.py:14 self._entries[key] = value has no TTL or size limit.",
        False,
        "en",
    ),
    Pair(
        "Missing await: asyncio.sleep(1) is never awaited",
        "app/worker.py:21 calls asyncio.sleep(1) without await.",
        "Blocking time.sleep inside an async function stalls the event loop",
        "app/worker.py:23 time.sleep(5) inside async def run().",
        False,
        "en",
    ),
    Pair(
        "Mutable default argument `cache={}` is shared between calls",
        "app/users.py:5 def get_user(user_id, cache={}): the dict persists across calls.",
        "get_user returns None instead of raising when the user does not exist",
        "app/users.py:7 `return cache.get(user_id)` hides a missing user from callers.",
        False,
        "en",
    ),
    Pair(
        "Retry loop never sleeps and busy-spins the CPU",
        "app/client.py:70 `while True:` retries send() immediately after a failure.",
        "Retry loop has no upper bound on attempts",
        "app/client.py:70 `while True:` retries forever when the server is down.",
        False,
        "en",
    ),
]

SAME_ZH = [
    Pair(
        "数据库连接在 run() 中打开后从未关闭",
        "app/db.py:12 将 connect() 的结果赋给 conn，任何路径都没有关闭它。",
        "run() 中 connect() 返回的连接没有关闭，导致连接泄漏",
        "app/db.py:12 打开连接后，正常返回和异常路径都没有调用 conn.close()。",
        True,
        "zh",
    ),
    Pair(
        "load_gpu_nic_affinity 的 subprocess.run 无 timeout，run_affinity 挂起会阻塞整个 ViT "
        "server 启动",
        "server_config_setup.py:534 调用 subprocess.run([...]) 时未传 timeout。",
        "subprocess.run 没有设置超时，子进程挂起将卡住服务启动",
        "server_config_setup.py:534 的 subprocess.run(cmd, capture_output=True) 没有 timeout=，"
        "辅助进程挂起时 ViT server 永远无法启动。",
        True,
        "zh",
    ),
    Pair(
        "resolveRpcTimeoutMs 对 configured_timeout_ms + rpc_timeout_margin_ms 存在 int64 "
        "有符号溢出",
        "MMRemoteOutputTransport.cc:16 直接相加两个 int64 配置值，没有边界检查。",
        "configured_timeout_ms 与 rpc_timeout_margin_ms 相加可能发生整数溢出",
        "MMRemoteOutputTransport.cc:16 两个用户配置的 int64 相加未做检查，有符号溢出是未定义行为。",
        True,
        "zh",
    ),
    Pair(
        "计数器自增未持有锁，存在竞态条件",
        "app/stats.py:40 的 `self.count += 1` 在 `with self._lock:` 之外执行。",
        "并发请求下 self.count += 1 没有加锁保护，会丢失更新",
        "app/stats.py:40 在锁外递增 self.count，而其他地方（app/stats.py:31）都持锁。",
        True,
        "zh",
    ),
    Pair(
        "ACCL_NIC_GPU_AFFINITY 被设置为空字符串后，后续 is not None 检查误判为已加载",
        "server_config_setup.py:560 将 os.environ['ACCL_NIC_GPU_AFFINITY'] 设为 ''，之后用 "
        "`is not None` 判断。",
        "空字符串的 ACCL_NIC_GPU_AFFINITY 会被 is not None 判断当作已设置",
        "server_config_setup.py:560-566：空字符串能通过 `is not None`，亲和性因此永远不会加载。",
        True,
        "zh",
    ),
    Pair(
        "SQL 语句通过 f-string 拼接，存在 SQL 注入风险",
        'app/users.py:22 cursor.execute(f"SELECT * FROM users WHERE id = {user_id}")。',
        "user_id 直接拼接进 SQL 查询字符串，可被注入",
        "app/users.py:22 把不可信的 user_id 格式化进 SQL 文本，而不是作为参数传入。",
        True,
        "zh",
    ),
    Pair(
        "文件句柄在 parse() 抛异常时不会被关闭",
        "app/io.py:14 f = open(path)，parse(f) 抛异常时会跳过 app/io.py:18 的 f.close()。",
        "open() 未使用 with，异常时泄漏文件描述符",
        "app/io.py:14 使用 open(path) 而不是 `with`，parse(f) 抛异常时不会执行 f.close()。",
        True,
        "zh",
    ),
]

DIFFERENT_ZH = [
    Pair(
        "数据库连接在 run() 中打开后从未关闭",
        "app/db.py:12 将 connect() 的结果赋给 conn，任何路径都没有关闭它。",
        "run() 忽略了 go(fast=True) 的返回值",
        "app/db.py:11 调用 go(fast=True) 后丢弃了表示失败的返回值。",
        False,
        "zh",
    ),
    Pair(
        "subprocess.run 未设置 timeout，子进程挂起会阻塞启动",
        "server_config_setup.py:534 调用 subprocess.run([...]) 时未传 timeout。",
        "subprocess.run 的返回码未检查，失败被静默忽略",
        "server_config_setup.py:534 的 subprocess.run(cmd) 没有 check=True，非零退出被忽略。",
        False,
        "zh",
    ),
    Pair(
        "configured_timeout_ms + rpc_timeout_margin_ms 存在 int64 有符号溢出",
        "MMRemoteOutputTransport.cc:16 直接相加两个 int64 配置值。",
        "未校验 configured_timeout_ms 为负数的情况",
        "MMRemoteOutputTransport.cc:14 接受小于 0 的 configured_timeout_ms 并作为截止时间使用。",
        False,
        "zh",
    ),
    Pair(
        "计数器自增未持有锁，存在竞态条件",
        "app/stats.py:40 的 `self.count += 1` 在 `with self._lock:` 之外执行。",
        "flush() 抛异常时通过 acquire() 获取的锁不会被释放",
        "app/stats.py:42 调用 self._lock.acquire()，flush() 可能在 app/stats.py:45 的 release() "
        "之前抛出。",
        False,
        "zh",
    ),
    Pair(
        "SQL 语句通过 f-string 拼接，存在 SQL 注入风险",
        'app/users.py:22 cursor.execute(f"SELECT * FROM users WHERE id = {user_id}")。',
        "数据库游标从未关闭",
        "app/users.py:21 cursor = conn.cursor() 在任何路径上都没有关闭。",
        False,
        "zh",
    ),
    Pair(
        "缓存键未包含用户 ID，导致不同用户间数据泄露",
        'app/cache.py:12 key = f"profile:{page}" 缺少 user_id。',
        "缓存条目永不过期，内存无限增长",
        "app/cache.py:14 self._entries[key] = value 没有 TTL 或容量上限。",
        False,
        "zh",
    ),
    Pair(
        "除零：items 为空时 len(items) 为 0",
        "app/stats.py:9 返回 summ(items) / len(items)，空列表时分母为 0。",
        "未定义名称 `summ`，执行到此行必然抛出 NameError",
        "ruff F821 (undefined-name): Undefined name `summ`\napp/stats.py:9: "
        "`return summ(items) / len(items)`",
        False,
        "zh",
    ),
]


# Written after the thresholds were chosen, to check they generalize (none was tuned on).
HELD_OUT = [
    Pair(
        "Unbounded queue in producer can exhaust memory",
        "app/pipeline.py:20 self.queue = queue.Queue() has no maxsize; producer() puts faster "
        "than consumer() gets.",
        "queue.Queue() without maxsize lets the producer outpace consumers and grow memory "
        "without limit",
        "app/pipeline.py:20 creates queue.Queue() with no maxsize, so memory grows while "
        "consumers lag.",
        True,
        "en",
    ),
    Pair(
        "Secret token written to the log",
        "app/client.py:44 log.debug('token=%s', token).",
        "log.debug prints the API token in clear text",
        "app/client.py:44 logs the bearer token via log.debug.",
        True,
        "en",
    ),
    Pair(
        "KeyError when config lacks 'port'",
        "app/config.py:9 port = config['port'] with no default.",
        "config['port'] raises KeyError if the key is missing",
        "app/config.py:9 indexes config['port'] directly; configs without port crash startup.",
        True,
        "en",
    ),
    Pair(
        "线程池未关闭，进程退出时可能挂起",
        "app/jobs.py:30 创建 ThreadPoolExecutor() 后从未调用 shutdown()。",
        "ThreadPoolExecutor 没有 shutdown，退出时线程残留导致进程挂起",
        "app/jobs.py:30 的 executor 没有使用 with 或 shutdown()，非守护线程会阻止进程退出。",
        True,
        "zh",
    ),
    Pair(
        "除以 len(items) 在列表为空时抛出 ZeroDivisionError",
        "app/stats.py:9 return total / len(items)，items 为空时分母为 0。",
        "items 为空时计算平均值会除零",
        "app/stats.py:9 没有检查 items 是否为空就除以 len(items)。",
        True,
        "zh",
    ),
    Pair(
        "Unbounded queue in producer can exhaust memory",
        "app/pipeline.py:20 queue.Queue() has no maxsize.",
        "Consumer thread is not a daemon, so shutdown hangs",
        "app/pipeline.py:22 threading.Thread(target=consume) without daemon=True and no join "
        "on exit.",
        False,
        "en",
    ),
    Pair(
        "KeyError when config lacks 'port'",
        "app/config.py:9 config['port'] with no default.",
        "port from config is not validated as an integer",
        "app/config.py:9 int(config['port']) is missing; a string port reaches bind().",
        False,
        "en",
    ),
    Pair(
        "Secret token written to the log",
        "app/client.py:44 log.debug('token=%s', token).",
        "Token refresh is never retried on 401",
        "app/client.py:46 a 401 response returns None instead of refreshing the token.",
        False,
        "en",
    ),
    Pair(
        "线程池未关闭，进程退出时可能挂起",
        "app/jobs.py:30 创建 ThreadPoolExecutor() 后从未调用 shutdown()。",
        "提交到线程池的任务异常被吞掉",
        "app/jobs.py:32 executor.submit() 返回的 future 从未调用 result()，异常不会被发现。",
        False,
        "zh",
    ),
    Pair(
        "除以 len(items) 在列表为空时抛出 ZeroDivisionError",
        "app/stats.py:9 return total / len(items)。",
        "total 使用 float 累加导致精度丢失",
        "app/stats.py:8 total += price 以浮点数累加金额，存在舍入误差。",
        False,
        "zh",
    ),
]

# Short titles, where shared identifiers weigh most (written with the held-out pairs).
SHORT = [
    Pair("subprocess.run has no timeout", "", "No timeout on subprocess.run", "", True, "en"),
    Pair(
        "subprocess.run has no timeout",
        "",
        "subprocess.run return code is not checked",
        "",
        False,
        "en",
    ),
    Pair(
        "requests.get has no timeout",
        "",
        "requests.get response status is not checked",
        "",
        False,
        "en",
    ),
    Pair("Connection leak in run()", "", "run() never closes the connection", "", True, "en"),
    Pair("conn.close() missing in run()", "", "run() ignores go() result", "", False, "en"),
]

LABELLED = SAME_EN + DIFFERENT_EN + SAME_ZH + DIFFERENT_ZH + HELD_OUT + SHORT


def _merged(title_a: str, evidence_a: str, title_b: str, evidence_b: str) -> bool:
    """Two reps' reports two lines apart in one file: one cluster or two?"""
    first = _finding(title_a, evidence=evidence_a, rep=0, line=10)
    second = _finding(title_b, evidence=evidence_b, rep=1, line=12)
    return len(cluster_findings([first, second])) == 1


def test_labelled_pairs_never_merge_different_defects() -> None:
    wrongly_merged = [
        (pair.title_a, pair.title_b) for pair in LABELLED if not pair.same and _merged(*pair[:4])
    ]

    assert wrongly_merged == []
    assert sum(not pair.same for pair in LABELLED) == 29


def test_labelled_pairs_merge_most_paraphrases() -> None:
    paraphrases = [pair for pair in LABELLED if pair.same]
    found = [pair for pair in paraphrases if _merged(*pair[:4])]

    recall = len(found) / len(paraphrases)
    print(f"\nclustering recall on labelled paraphrases: {len(found)}/{len(paraphrases)}")
    assert recall >= 0.7
    assert {pair.lang for pair in found} == {"en", "zh"}
    held_out = [pair for pair in HELD_OUT if pair.same]
    assert sum(pair in found for pair in held_out) >= 3


def test_pair_decisions_do_not_depend_on_order() -> None:
    for title_a, evidence_a, title_b, evidence_b, _, _ in LABELLED:
        assert _merged(title_a, evidence_a, title_b, evidence_b) == _merged(
            title_b, evidence_b, title_a, evidence_a
        )


_LEAK_EVIDENCE = "app/db.py:12 opens a connection with connect(); nothing closes it."


def test_paraphrases_across_reps_form_one_cluster_with_votes() -> None:
    findings = [
        _finding(
            "Connection opened in run() is never closed",
            rep=0,
            line=12,
            path="app/db.py",
            evidence="app/db.py:12 assigns connect() to conn; no path closes it.",
        ),
        _finding(
            "run() ignores the return value of go(fast=True)",
            rep=1,
            line=11,
            path="app/db.py",
            evidence="app/db.py:11 calls go(fast=True) and discards its result.",
        ),
        _finding(
            "conn = connect() leaks the database connection",
            rep=1,
            line=12,
            path="app/db.py",
            evidence="app/db.py:12 opens a connection with connect(); neither the normal "
            "return nor the exception path calls conn.close().",
        ),
        _finding(
            "Database connection leak: the connect() result is never closed",
            rep=2,
            line=11,
            end_line=12,
            path="app/db.py",
            evidence=_LEAK_EVIDENCE,
        ),
        _finding(
            "run() never closes the connection it opens",
            rep=3,
            line=13,
            path="app/db.py",
            evidence=_LEAK_EVIDENCE,
        ),
        _finding(
            "Connection opened in run() is never closed on error paths",
            rep=4,
            line=12,
            path="app/db.py",
            evidence="app/db.py:12 conn = connect(); an exception in query() skips close().",
        ),
    ]

    leak, ignored = cluster_findings(findings)

    assert _reps([leak, ignored]) == [[0, 1, 2, 3, 4], [1]]
    assert (leak.votes, ignored.votes) == (5, 1)
    assert not leak.static


def test_a_rep_that_repeats_itself_counts_once() -> None:
    findings = [
        _finding("Connection opened in run() is never closed", rep=0, line=12),
        _finding("Connection opened in run() is never closed on errors", rep=0, line=13),
        _finding("The connection opened in run() is never closed", rep=3, line=12),
    ]

    (cluster,) = cluster_findings(findings)

    assert len(cluster.members) == 3
    assert cluster.votes == 2


def test_different_defects_on_nearby_lines_stay_apart() -> None:
    findings = [
        _finding("SQL query built with an f-string allows SQL injection", rep=0, line=22),
        _finding("Database cursor is never closed", rep=1, line=21),
        _finding("SQL injection: user_id is interpolated into the query string", rep=2, line=22),
        _finding("The cursor opened in get_user is never closed", rep=3, line=21),
    ]

    clusters = cluster_findings(findings)

    assert _reps(clusters) == [[0, 2], [1, 3]]


def test_different_files_never_merge() -> None:
    title = "Connection opened in run() is never closed"
    findings = [
        _finding(title, rep=0, path="app/a.py"),
        _finding(title, rep=1, path="app/b.py"),
        _finding(title, rep=2, path="app/a.py"),
    ]

    clusters = cluster_findings(findings)

    assert _reps(clusters) == [[0, 2], [1]]


def test_lines_must_be_within_the_window() -> None:
    title = "Connection opened in run() is never closed"

    assert len(cluster_findings([_finding(title, line=10), _finding(title, line=13)])) == 1
    assert len(cluster_findings([_finding(title, line=10), _finding(title, line=14)])) == 2
    assert (
        len(cluster_findings([_finding(title, line=10), _finding(title, line=14)], line_window=4))
        == 1
    )
    ranged = [_finding(title, line=10, end_line=20), _finding(title, line=23)]
    assert len(cluster_findings(ranged)) == 1


def test_sides_are_not_compared() -> None:
    title = "Connection opened in run() is never closed"
    findings = [_finding(title, side=Side.RIGHT), _finding(title, side=Side.LEFT)]

    assert len(cluster_findings(findings)) == 2


def test_paths_are_normalized_and_renames_apply_only_when_given() -> None:
    title = "Connection opened in run() is never closed"
    spelled = [
        _finding(title, path="./app//db.py", rep=0),
        _finding(title, path="app/db.py", rep=1),
    ]
    renamed = [_finding(title, path="app/old.py", rep=0), _finding(title, path="app/new.py", rep=1)]

    assert len(cluster_findings(spelled)) == 1
    assert len(cluster_findings(renamed)) == 2
    (cluster,) = cluster_findings(renamed, renames={"./app/old.py": "app/new.py"})
    assert [member.path for member in cluster.members] == ["app/old.py", "app/new.py"]
    assert normalize_path("./app//sub/../db.py") == "app/db.py"


def test_static_and_model_findings_about_one_defect_merge() -> None:
    static = _static_f821()
    findings = [
        static,
        _finding("Typo `summ` instead of `sum` raises NameError", rep=0, line=9),
        _finding(
            "Division by zero when items is empty",
            rep=1,
            line=9,
            evidence="app/stats.py:9 returns summ(items) / len(items); len(items) is 0 for [].",
        ),
        _finding("NameError: name 'summ' is not defined", rep=2, line=9),
    ]

    name_error, division = cluster_findings(findings)

    assert name_error.members == (static, findings[1], findings[3])
    assert name_error.static and name_error.votes == 2
    assert name_error.representative is static
    assert name_error.max_severity is Severity.P0
    assert name_error.severities == (Severity.P0, Severity.P2)
    assert _reps([division]) == [[1]] and not division.static


def test_same_static_rule_on_the_same_line_is_one_finding() -> None:
    ruff = _static_f821()
    other_analyzer = ruff.model_copy(update={"title": "summ is undefined", "evidence": ""})
    unused = ruff.model_copy(
        update={
            "rule": "F841",
            "title": "Local variable `total` is assigned but never used",
            "certain_failure": False,
            "severity": Severity.P3,
        }
    )

    clusters = cluster_findings([ruff, other_analyzer, unused])

    assert [cluster.members for cluster in clusters] == [(ruff, other_analyzer), (unused,)]
    assert clusters[0].votes == 0 and clusters[0].static


def test_a_hygiene_rule_does_not_claim_findings_by_symbol() -> None:
    unused = Finding(
        severity=Severity.P3,
        category="maintainability",
        title="Local variable `items` is assigned but never used",
        path="app/stats.py",
        line=9,
        source=FindingSource.STATIC,
        rule="F841",
    )
    model = _finding("items may be None, so len(items) raises TypeError", rep=0, line=9)

    assert len(cluster_findings([unused, model])) == 2


def test_chinese_findings_cluster() -> None:
    findings = [
        _finding("数据库连接在 run() 中打开后从未关闭", rep=0, line=12, evidence=_ZH_LEAK),
        _finding("run() 忽略了 go(fast=True) 的返回值", rep=1, line=11, evidence=_ZH_GO),
        _finding(
            "run() 中 connect() 返回的连接没有关闭，导致连接泄漏", rep=1, line=12, evidence=_ZH_LEAK
        ),
        _finding("run() 打开的数据库连接从未关闭", rep=2, line=13),
        _static_f821(lang="zh"),
        _finding("`summ` 拼写错误，应为 `sum`，运行时抛出 NameError", rep=3, line=9),
    ]

    clusters = cluster_findings(findings)

    assert [[findings.index(m) for m in cluster.members] for cluster in clusters] == [
        [0, 2, 3],
        [1],
        [4, 5],
    ]
    assert [cluster.votes for cluster in clusters] == [3, 1, 1]


_ZH_LEAK = "app/stats.py:12 将 connect() 的结果赋给 conn，任何路径都没有关闭它。"
_ZH_GO = "app/stats.py:11 调用 go(fast=True) 后丢弃了表示失败的返回值。"


def test_average_linkage_keeps_a_bridging_finding_from_chaining() -> None:
    no_timeout = _finding("subprocess.run has no timeout", rep=0)
    no_timeout_again = _finding("No timeout on subprocess.run", rep=1)
    both = _finding("no timeout and unchecked return code in subprocess.run", rep=2)
    unchecked = _finding("subprocess.run return code is not checked", rep=3)

    clusters = cluster_findings([no_timeout, no_timeout_again, both, unchecked])

    assert _reps(clusters) == [[0, 1, 2], [3]]
    # Single linkage would have chained it: alone, the bridge and the last one are one defect.
    assert len(cluster_findings([both, unchecked])) == 1


def test_representative_is_the_member_most_like_the_others() -> None:
    findings = [
        _finding("run() leaks", rep=0, line=12),
        _finding("Connection opened in run() is never closed", rep=1, line=12),
        _finding("The connection opened in run() is never closed", rep=2, line=12),
    ]
    cluster = Cluster(members=tuple(findings))

    assert cluster.representative is findings[1]
    assert Cluster(members=tuple(findings[1:])).representative is findings[1]


def test_clusters_are_deterministic_and_in_order_of_first_appearance() -> None:
    findings = _benchmark_findings()

    first = cluster_findings(findings)
    second = cluster_findings(list(findings))

    assert first == second
    positions = [findings.index(cluster.members[0]) for cluster in first]
    assert positions == sorted(positions)
    for cluster in first:
        indexes = [findings.index(member) for member in cluster.members]
        assert indexes == sorted(indexes)


def test_five_reps_of_forty_findings_cluster_fast() -> None:
    findings = _benchmark_findings()
    cluster_findings(findings[:5])  # imports and regex compilation out of the measurement

    started = time.perf_counter()
    clusters = cluster_findings(findings)
    elapsed_ms = (time.perf_counter() - started) * 1000

    print(f"\n{len(findings)} findings -> {len(clusters)} clusters in {elapsed_ms:.1f} ms")
    assert len(clusters) == 40
    assert all(cluster.votes == 5 for cluster in clusters)


_DEFECTS = [
    ("connection", "is never closed", "leaks: it is not closed on any path"),
    ("timeout", "is ignored by the retry loop", "is not honoured when the retry loop runs"),
    ("cache", "grows without bound", "has no size limit, so memory grows without bound"),
    ("lock", "is not released when flush() raises", "stays held after flush() raises"),
    ("query", "interpolates user input into SQL", "builds SQL from user input (injection)"),
    ("counter", "is incremented outside the lock", "is updated without holding the lock"),
    ("token", "is written to the debug log", "appears in clear text in the debug log"),
    ("index", "is off by one and skips the last item", "skips the final item (off-by-one)"),
]


def _benchmark_findings() -> list[Finding]:
    """5 reps × 40 defects in 8 files, each rep wording each defect its own way, shuffled."""
    rng = random.Random(7)
    defects = []
    for number in range(40):
        subject, one, other = _DEFECTS[number % len(_DEFECTS)]
        name = f"{subject}_{number}"
        path = f"app/module_{number % 8}.py"
        line = 10 + 9 * (number // 8)
        defects.append((name, one, other, path, line))
    findings = []
    for rep in range(5):
        for name, one, other, path, line in rng.sample(defects, len(defects)):
            wording = one if rep % 2 == 0 else other
            title = f"`{name}` {wording}" if rep < 3 else f"In {path}, `{name}` {wording}"
            evidence = f"{path}:{line + rep % 2} `{name}` {wording}; see the call in handle()."
            findings.append(
                _finding(title, rep=rep, path=path, line=line + rep % 2, evidence=evidence)
            )
    return findings
