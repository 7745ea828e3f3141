"""What each analyzer rule means for a review: severity, category, certain failure, wording.

The mapping is data. A rule code is looked up exactly first, then by its longest matching prefix
(``ASYNC251`` → ``ASYNC2`` → ``ASYNC``); a code nothing matches is P3 style. Severities follow
the seed's scale (see ``assay.model.Severity``):

- P0, ``certain_failure``: the line raises (or the module fails to compile) whenever it runs:
  syntax errors, undefined names, format strings that cannot match their arguments, imports of
  names the imported in-repo module does not define. These block without votes.
- P1: very likely broken, but not on every execution: ``__all__`` naming a missing symbol (only
  ``import *`` breaks), an undefined name in an annotation or a stub (only evaluated on demand),
  a submodule with no file (a build may generate it). The gate does not let them block alone.
- P2: real defects whose impact is conditional: swallowed exceptions, mutable defaults, blocking
  calls in ``async`` code, shell injection.
- P3: hygiene (unused imports and variables) and a deliberately small set of style rules.

``RUFF_SELECT`` is what ruff is asked to check. It is a short, explicit list instead of ``ALL``:
every selected rule either fails at run time or is a known source of real defects, so a review is
not flooded with formatting remarks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from assay.model import Claim, ClaimKind, Finding, FindingSource, Severity

__all__ = [
    "DEFAULT_RULE",
    "IMPORT_OF_MISSING_MODULE",
    "IMPORT_OF_MISSING_NAME",
    "RUFF_IGNORE",
    "RUFF_SELECT",
    "RULES",
    "SUGGESTIONS",
    "SYNTAX_ERROR",
    "TITLES",
    "UNDEFINED_NAME_IN_ANNOTATION",
    "Language",
    "RuleHit",
    "RuleSpec",
    "build_finding",
    "code_span",
    "line_contains_claim",
    "line_text",
    "rule_for",
    "source_lines",
]

Language = Literal["en", "zh"]

SYNTAX_ERROR = "invalid-syntax"
"""The code ruff (0.9 and later) gives syntax errors; older versions said ``E999``."""
UNDEFINED_NAME_IN_ANNOTATION = "F821:annotation"
"""The spec key of an F821 inside a type annotation or a string: it only fails if evaluated."""
IMPORT_OF_MISSING_NAME = "ASSAY-I001"
"""``from module import name`` where the in-repo ``module`` defines no ``name``."""
IMPORT_OF_MISSING_MODULE = "ASSAY-I002"
"""An import of a submodule of an in-repo package that has no file (it may be generated)."""

RUFF_SELECT: tuple[str, ...] = (
    # Pyflakes: undefined names, compile-time errors, broken format strings, unused code.
    "F",
    # pycodestyle, only the comparisons that are usually bugs and the bare except.
    "E711",
    "E712",
    "E713",
    "E714",
    "E721",
    "E722",
    "W605",
    # Pylint errors: code that raises when it runs.
    "PLE",
    # Swallowed exceptions.
    "BLE001",
    "S110",
    "S112",
    # Bugbear: the rules that find defects, not taste.
    "B006",
    "B009",
    "B010",
    "B012",
    "B015",
    "B018",
    "B020",
    "B023",
    "B904",
    # Blocking calls in async code, and tasks that may be garbage-collected.
    "ASYNC",
    "RUF006",
    # Code execution and injection.
    "S307",
    "S506",
    "S602",
)
RUFF_IGNORE: tuple[str, ...] = (
    # "may be undefined, or defined from star imports": one remark per use of every name.
    "F405",
)


_P0, _P1, _P2, _P3 = Severity.P0, Severity.P1, Severity.P2, Severity.P3
_CERTAIN = True
_CORRECTNESS = "correctness"
_ERRORS = "error-handling"
_CONCURRENCY = "concurrency"
_SECURITY = "security"
_MAINTAINABILITY = "maintainability"
_STYLE = "style"


@dataclass(frozen=True)
class RuleSpec:
    """How a rule's hits are reported."""

    severity: Severity
    category: str
    certain_failure: bool = False
    """It fails whenever the line runs (or the module is compiled): it blocks without votes."""
    wording: str | None = None
    """The key of its title and suggestion in ``TITLES``/``SUGGESTIONS`` (``None``: the message)."""


RULES: Mapping[str, RuleSpec] = {
    # Certain failures: compile errors, NameError, TypeError/ValueError/IndexError on every run.
    SYNTAX_ERROR: RuleSpec(_P0, _CORRECTNESS, _CERTAIN, "syntax"),
    "E999": RuleSpec(_P0, _CORRECTNESS, _CERTAIN, "syntax"),
    "F821": RuleSpec(_P0, _CORRECTNESS, _CERTAIN, "undefined-name"),
    **dict.fromkeys(
        ("F621", "F622", "F701", "F702", "F704", "F706", "F707"),
        RuleSpec(_P0, _CORRECTNESS, _CERTAIN, "compile-error"),
    ),
    **dict.fromkeys(
        ("PLE0117", "PLE0118", "PLE1142", "PLE1700"),
        RuleSpec(_P0, _CORRECTNESS, _CERTAIN, "compile-error"),
    ),
    **dict.fromkeys(
        ("F501", "F502", "F503", "F505", "F506", "F507", "F508", "F509", "F521", "F524", "F525"),
        RuleSpec(_P0, _CORRECTNESS, _CERTAIN, "format-mismatch"),
    ),
    "PLE1300": RuleSpec(_P0, _CORRECTNESS, _CERTAIN, "format-mismatch"),
    "F633": RuleSpec(_P0, _CORRECTNESS, _CERTAIN, "F633"),
    "PLE0101": RuleSpec(_P0, _CORRECTNESS, _CERTAIN, "PLE0101"),
    "PLE0241": RuleSpec(_P0, _CORRECTNESS, _CERTAIN, "PLE0241"),
    "PLE0643": RuleSpec(_P0, _CORRECTNESS, _CERTAIN, "PLE0643"),
    "PLE1132": RuleSpec(_P0, _CORRECTNESS, _CERTAIN, "PLE1132"),
    IMPORT_OF_MISSING_NAME: RuleSpec(_P0, _CORRECTNESS, _CERTAIN, IMPORT_OF_MISSING_NAME),
    # Very likely broken, but not on every run: the gate does not let these block alone.
    IMPORT_OF_MISSING_MODULE: RuleSpec(_P1, _CORRECTNESS, wording=IMPORT_OF_MISSING_MODULE),
    UNDEFINED_NAME_IN_ANNOTATION: RuleSpec(_P1, _CORRECTNESS, wording="annotation-name"),
    "F822": RuleSpec(_P1, _CORRECTNESS, wording="F822"),
    "F823": RuleSpec(_P1, _CORRECTNESS, wording="F823"),
    "PLE0604": RuleSpec(_P1, _CORRECTNESS, wording="PLE0604"),
    "PLE0605": RuleSpec(_P1, _CORRECTNESS, wording="PLE0605"),
    "PLE0704": RuleSpec(_P1, _CORRECTNESS, wording="PLE0704"),
    "PLE": RuleSpec(_P2, _CORRECTNESS),
    # Conditional defects.
    "E722": RuleSpec(_P2, _ERRORS, wording="E722"),
    "BLE001": RuleSpec(_P2, _ERRORS, wording="BLE001"),
    "S110": RuleSpec(_P2, _ERRORS, wording="S110"),
    "S112": RuleSpec(_P2, _ERRORS, wording="S112"),
    "B012": RuleSpec(_P2, _ERRORS, wording="B012"),
    "B006": RuleSpec(_P2, _CORRECTNESS, wording="B006"),
    "B015": RuleSpec(_P2, _CORRECTNESS, wording="B015"),
    "B020": RuleSpec(_P2, _CORRECTNESS, wording="B020"),
    "B023": RuleSpec(_P2, _CORRECTNESS, wording="B023"),
    "F601": RuleSpec(_P2, _CORRECTNESS, wording="repeated-key"),
    "F602": RuleSpec(_P2, _CORRECTNESS, wording="repeated-key"),
    "F631": RuleSpec(_P2, _CORRECTNESS, wording="F631"),
    "F632": RuleSpec(_P2, _CORRECTNESS, wording="F632"),
    "F634": RuleSpec(_P2, _CORRECTNESS, wording="F634"),
    "F901": RuleSpec(_P2, _CORRECTNESS, wording="F901"),
    "ASYNC2": RuleSpec(_P2, _CONCURRENCY, wording="blocking-call"),
    "ASYNC109": RuleSpec(_P3, _STYLE),
    "ASYNC": RuleSpec(_P2, _CONCURRENCY),
    "RUF006": RuleSpec(_P2, _CONCURRENCY, wording="RUF006"),
    "S307": RuleSpec(_P2, _SECURITY, wording="S307"),
    "S506": RuleSpec(_P2, _SECURITY, wording="S506"),
    "S602": RuleSpec(_P2, _SECURITY, wording="S602"),
    "S": RuleSpec(_P2, _SECURITY),
    # Hygiene and a little style.
    "F401": RuleSpec(_P3, _MAINTAINABILITY, wording="F401"),
    "F403": RuleSpec(_P3, _MAINTAINABILITY, wording="F403"),
    "F811": RuleSpec(_P3, _MAINTAINABILITY, wording="F811"),
    "F841": RuleSpec(_P3, _MAINTAINABILITY, wording="F841"),
    "F": RuleSpec(_P3, _MAINTAINABILITY),
    "B018": RuleSpec(_P3, _MAINTAINABILITY, wording="B018"),
    "B904": RuleSpec(_P3, _ERRORS, wording="B904"),
    "B": RuleSpec(_P3, _MAINTAINABILITY),
    "E711": RuleSpec(_P3, _STYLE, wording="E711"),
    "E712": RuleSpec(_P3, _STYLE, wording="E712"),
    "E713": RuleSpec(_P3, _STYLE, wording="E713"),
    "E714": RuleSpec(_P3, _STYLE, wording="E714"),
    "E721": RuleSpec(_P3, _STYLE, wording="E721"),
    "W605": RuleSpec(_P3, _STYLE, wording="W605"),
    "B009": RuleSpec(_P3, _STYLE, wording="B009"),
    "B010": RuleSpec(_P3, _STYLE, wording="B010"),
}

DEFAULT_RULE = RuleSpec(_P3, _STYLE)
"""For codes nothing in ``RULES`` matches."""

# Templates may use {name} (the symbol a hit is about: the first `quoted` token of the analyzer's
# message), {module}, {target} and {message}. A template whose fields a hit lacks falls back to
# the analyzer's message (titles) or its fix description (suggestions).
TITLES: Mapping[Language, Mapping[str, str]] = {
    "en": {
        "syntax": "Syntax error: the module cannot be imported ({message})",
        "undefined-name": "Undefined name `{name}` fails with NameError when this line runs",
        "compile-error": "Python rejects this code when compiling the module: {message}",
        "format-mismatch": "Format string and arguments do not match; this raises: {message}",
        "F633": "`print >>` is Python 2 syntax and raises TypeError",
        "PLE0101": "`__init__` returns a value, so creating the object raises TypeError",
        "PLE0241": "Duplicate base class `{name}` raises TypeError when the class is defined",
        "PLE0643": "Index out of range raises IndexError when this line runs",
        "PLE1132": "Repeated keyword argument `{name}` makes this call fail",
        IMPORT_OF_MISSING_NAME: "`{module}` has no `{name}`: this import raises ImportError",
        IMPORT_OF_MISSING_MODULE: "Module `{module}` is not in the repository (nor built?)",
        "annotation-name": "Undefined name `{name}` in an annotation fails wherever it is resolved",
        "F822": "`__all__` exports `{name}`, which the module does not define",
        "F823": "Local variable `{name}` is read before it is assigned (UnboundLocalError)",
        "PLE0604": "`__all__` holds a non-string, so `import *` raises TypeError",
        "PLE0605": "`__all__` is not a list or tuple of strings",
        "PLE0704": "Bare `raise` outside `except` raises RuntimeError unless one is being handled",
        "E722": "Bare `except:` also catches KeyboardInterrupt and SystemExit",
        "BLE001": "Blind `except {name}` swallows unexpected errors",
        "S110": "Exception silently swallowed by `except: pass`",
        "S112": "Exception silently swallowed by `except: continue`",
        "B012": "`{name}` inside `finally` swallows the exception being raised",
        "B006": "Mutable default argument is shared between calls",
        "B015": "Comparison result is discarded (missing `assert`?)",
        "B020": "Loop variable `{name}` overrides the iterable it iterates",
        "B023": "Closure uses loop variable `{name}`, which is bound late",
        "repeated-key": "Dictionary key `{name}` is repeated with different values",
        "F631": "`assert` on a tuple is always true",
        "F632": "`is` comparison with a literal compares identity, not value",
        "F634": "`if` on a tuple is always true",
        "F901": "`raise NotImplemented` raises TypeError instead",
        "blocking-call": "Blocking call in an `async` function stalls the event loop: {message}",
        "RUF006": "Task from `{name}` may be garbage-collected before it finishes",
        "S307": "`eval` runs arbitrary code",
        "S506": "`yaml.load` without a safe loader can run arbitrary code",
        "S602": "Subprocess with `shell=True` is open to shell injection",
        "F401": "Unused import `{name}`",
        "F403": "Star import hides where names come from",
        "F811": "`{name}` is redefined before it is used",
        "F841": "Local variable `{name}` is assigned but never used",
        "B018": "Expression statement has no effect",
        "B904": "`raise` inside `except` without `from` hides the original cause",
        "E711": "Comparison to `None` should use `is`",
        "E712": "Comparison to `True`/`False` with `==`",
        "E713": "Use `not in` for membership tests",
        "E714": "Use `is not` for identity tests",
        "E721": "Type comparison with `==`; use `isinstance` or `is`",
        "W605": "Invalid escape sequence `{name}` in a string",
        "B009": "`getattr` with a constant attribute name",
        "B010": "`setattr` with a constant attribute name",
    },
    "zh": {
        "syntax": "语法错误，整个模块无法导入：{message}",
        "undefined-name": "未定义名称 `{name}`，执行到此行必然抛出 NameError",
        "compile-error": "Python 编译该模块时即报错：{message}",
        "format-mismatch": "格式字符串与参数不匹配，执行时必然抛出异常：{message}",
        "F633": "`print >>` 是 Python 2 语法，执行时必然抛出 TypeError",
        "PLE0101": "`__init__` 返回了值，创建对象时必然抛出 TypeError",
        "PLE0241": "重复的基类 `{name}`，定义类时必然抛出 TypeError",
        "PLE0643": "索引越界，执行到此行必然抛出 IndexError",
        "PLE1132": "关键字参数 `{name}` 重复，此调用必然失败",
        IMPORT_OF_MISSING_NAME: "`{module}` 中没有 `{name}`，此导入必然抛出 ImportError",
        IMPORT_OF_MISSING_MODULE: "仓库中没有模块 `{module}`（是否由构建生成？）",
        "annotation-name": "注解中的未定义名称 `{name}`，一旦注解被求值即会失败",
        "F822": "`__all__` 导出了模块中未定义的 `{name}`",
        "F823": "局部变量 `{name}` 在赋值前被读取（UnboundLocalError）",
        "PLE0604": "`__all__` 含有非字符串，`import *` 会抛出 TypeError",
        "PLE0605": "`__all__` 不是字符串列表或元组",
        "PLE0704": "`except` 块之外的裸 `raise` 会抛出 RuntimeError（除非调用时正在处理异常）",
        "E722": "裸 `except:` 会连 KeyboardInterrupt 和 SystemExit 一起捕获",
        "BLE001": "宽泛的 `except {name}` 会吞掉意外错误",
        "S110": "`except` 中直接 `pass`，异常被静默吞掉",
        "S112": "`except` 中直接 `continue`，异常被静默吞掉",
        "B012": "`finally` 中的 `{name}` 会吞掉正在抛出的异常",
        "B006": "可变默认参数在多次调用之间共享",
        "B015": "比较结果被丢弃（是否漏写了 `assert`？）",
        "B020": "循环变量 `{name}` 覆盖了正在迭代的对象",
        "B023": "闭包使用了循环变量 `{name}`，其值为延迟绑定",
        "repeated-key": "字典键 `{name}` 重复且值不同",
        "F631": "对元组 `assert` 恒为真",
        "F632": "用 `is` 与字面量比较的是对象身份而非值",
        "F634": "对元组的 `if` 判断恒为真",
        "F901": "`raise NotImplemented` 实际抛出的是 TypeError",
        "blocking-call": "`async` 函数中的阻塞调用会卡住事件循环：{message}",
        "RUF006": "`{name}` 创建的任务未保存引用，可能在完成前被垃圾回收",
        "S307": "`eval` 会执行任意代码",
        "S506": "未使用安全 Loader 的 `yaml.load` 可执行任意代码",
        "S602": "`shell=True` 的子进程调用存在 shell 注入风险",
        "F401": "未使用的导入 `{name}`",
        "F403": "`import *` 使名称来源不明确",
        "F811": "`{name}` 在使用前被重复定义",
        "F841": "局部变量 `{name}` 赋值后从未使用",
        "B018": "表达式语句没有任何效果",
        "B904": "`except` 中 `raise` 未使用 `from`，丢失原始异常链",
        "E711": "与 `None` 比较应使用 `is`",
        "E712": "使用 `==` 与 `True`/`False` 比较",
        "E713": "成员检测应使用 `not in`",
        "E714": "身份检测应使用 `is not`",
        "E721": "用 `==` 比较类型；应使用 `isinstance` 或 `is`",
        "W605": "字符串中存在无效转义序列 `{name}`",
        "B009": "用常量属性名调用 `getattr`",
        "B010": "用常量属性名调用 `setattr`",
    },
}
SUGGESTIONS: Mapping[Language, Mapping[str, str]] = {
    "en": {
        "syntax": "Fix the syntax; every import of this module fails until then.",
        "undefined-name": "Define or import `{name}` before this line.",
        "F633": "Use `print(..., file=stream)`.",
        IMPORT_OF_MISSING_NAME: "Define `{name}` in `{target}`, or import it from where it is.",
        IMPORT_OF_MISSING_MODULE: "Fix the module path, or add `{target}`.",
        "annotation-name": "Import `{name}` (under `if TYPE_CHECKING:` if only for typing).",
        "F822": "Define `{name}` or drop it from `__all__`; `import *` raises AttributeError.",
        "F823": "Assign `{name}` before reading it, or declare it `global`/`nonlocal`.",
        "E722": "Catch the exceptions this code expects (at least `except Exception:`).",
        "BLE001": "Catch the specific exceptions this code expects, or re-raise.",
        "S110": "Handle or log the exception, or narrow the `except` clause.",
        "S112": "Handle or log the exception, or narrow the `except` clause.",
        "B006": "Default to `None` and create the object inside the function.",
        "B023": "Bind the value now, e.g. as a default argument.",
        "F901": "Raise `NotImplementedError`.",
        "RUF006": "Keep a reference to the task until it is done.",
        "S506": "Use `yaml.safe_load`.",
        "S602": "Pass an argument list without `shell=True`.",
        "F401": "Remove the import, or list it in `__all__` if it is re-exported.",
        "B904": "Use `raise ... from err` (or `from None`).",
        "W605": "Use a raw string or escape the backslash.",
    },
    "zh": {
        "syntax": "修正语法；在此之前任何导入该模块的代码都会失败。",
        "undefined-name": "在此行之前定义或导入 `{name}`。",
        "F633": "改用 `print(..., file=stream)`。",
        IMPORT_OF_MISSING_NAME: "在 `{target}` 中定义 `{name}`，或从实际定义它的模块导入。",
        IMPORT_OF_MISSING_MODULE: "修正模块路径，或添加 `{target}`。",
        "annotation-name": "导入 `{name}`（仅用于类型检查时可放在 `if TYPE_CHECKING:` 下）。",
        "F822": "定义 `{name}` 或将其从 `__all__` 中移除；否则 `import *` 会抛出 AttributeError。",
        "F823": "在读取前为 `{name}` 赋值，或声明 `global`/`nonlocal`。",
        "E722": "只捕获此处预期的具体异常（至少使用 `except Exception:`）。",
        "BLE001": "只捕获此处预期的具体异常，或重新抛出。",
        "S110": "处理或记录该异常，或收窄 `except` 的范围。",
        "S112": "处理或记录该异常，或收窄 `except` 的范围。",
        "B006": "默认值改为 `None`，在函数内部创建对象。",
        "B023": "立即绑定该值，例如作为默认参数传入。",
        "F901": "改为抛出 `NotImplementedError`。",
        "RUF006": "在任务完成前保存对它的引用。",
        "S506": "改用 `yaml.safe_load`。",
        "S602": "传入参数列表，不要使用 `shell=True`。",
        "F401": "删除该导入；如为重新导出，请列入 `__all__`。",
        "B904": "使用 `raise ... from err`（或 `from None`）。",
        "W605": "使用原始字符串或转义反斜杠。",
    },
}


def rule_for(code: str | None) -> RuleSpec:
    """The spec for an analyzer rule code: exact match, else the longest matching prefix.

    Args:
        code: The rule code (``F821``); ``None`` means a syntax error (older ruff versions).

    Returns:
        The matching spec, or ``DEFAULT_RULE``.
    """
    if code is None:
        return RULES[SYNTAX_ERROR]
    if code in RULES:
        return RULES[code]
    prefixes = [key for key in RULES if code.startswith(key)]
    return RULES[max(prefixes, key=len)] if prefixes else DEFAULT_RULE


@dataclass(frozen=True)
class RuleHit:
    """One place where one rule matched, before it is worded as a finding."""

    analyzer: str
    """``ruff`` or ``assay``."""
    code: str
    rule_name: str | None
    message: str
    path: str
    line: int
    end_line: int | None
    source_line: str
    """The text of ``line``, as evidence."""
    fields: Mapping[str, str] = field(default_factory=dict)
    """Template fields: ``name``, ``module``, ``target``."""
    fix_message: str | None = None
    """The analyzer's own fix description, used when the spec has no suggestion."""
    claims: Sequence[Claim] = ()
    spec_key: str | None = None
    """Look the rule up under this key instead of ``code`` (``F821:annotation``)."""


def build_finding(hit: RuleHit, lang: Language) -> Finding:
    """Word a rule hit as a static ``Finding`` in the review's language.

    Args:
        hit: Where the rule matched and what the analyzer said.
        lang: ``en`` or ``zh``, for the title and suggestion.

    Returns:
        A finding with ``source=STATIC``, the rule code, and the evidence quoted from the line.
    """
    spec = rule_for(hit.spec_key or hit.code)
    fields = {**hit.fields, "message": hit.message, "code": hit.code}
    wording = spec.wording or ""
    title = _fill(TITLES[lang].get(wording), fields) or hit.message
    suggestion = _fill(SUGGESTIONS[lang].get(wording), fields) or hit.fix_message or ""
    named = hit.rule_name and hit.rule_name != hit.code
    label = f"{hit.analyzer} {hit.code}" + (f" ({hit.rule_name})" if named else "")
    quoted = hit.source_line.strip()
    location = f"{hit.path}:{hit.line}" + (f": {code_span(quoted)}" if quoted else "")
    evidence = f"{label}: {hit.message}\n{location}"
    return Finding(
        severity=spec.severity,
        category=spec.category,
        title=title,
        path=hit.path,
        line=hit.line,
        end_line=hit.end_line,
        evidence=evidence,
        suggestion=suggestion,
        claims=tuple(hit.claims),
        source=FindingSource.STATIC,
        rule=hit.code,
        certain_failure=spec.certain_failure,
    )


def line_contains_claim(path: str, line: int, needle: str) -> Claim:
    """A deterministic claim that ``path`` line ``line`` at head contains ``needle``."""
    return Claim(
        kind=ClaimKind.LINE_CONTAINS,
        text=f"{path}:{line} contains {code_span(needle)}",
        path=path,
        line=line,
        needle=needle,
    )


_FIELD = re.compile(r"\{(\w+)\}")


def _fill(template: str | None, fields: Mapping[str, str]) -> str | None:
    """``template`` with its fields filled, or ``None`` when the hit lacks one of them."""
    if template is None or any(name not in fields for name in _FIELD.findall(template)):
        return None
    return _FIELD.sub(lambda match: fields[match.group(1)], template)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def source_lines(content: bytes) -> list[str]:
    """The lines of a file as analyzers number them (``lines[row - 1]``).

    Python and ruff break lines at ``\\n``, ``\\r\\n`` and ``\\r`` only; ``str.splitlines()`` also
    breaks at form feeds and other separators, which would shift every later line.
    """
    return _LINE_BREAK.split(content.decode("utf-8", errors="replace"))


def line_text(lines: Sequence[str], row: int) -> str:
    """Line ``row`` (1-based) of ``lines``, or ``""`` when out of range."""
    return lines[row - 1] if 0 < row <= len(lines) else ""


_MAX_QUOTE = 200


def code_span(text: str) -> str:
    """``text`` as one Markdown code span, whatever backticks it contains.

    Untrusted text (a source line) cannot close the span early: the fence is one backtick longer
    than the longest run inside it, per CommonMark. Long text is cut with an ellipsis.
    """
    if len(text) > _MAX_QUOTE:
        text = text[:_MAX_QUOTE] + "…"
    text = text.replace("\n", " ").replace("\r", " ")
    if not text.strip():
        return "` `"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"
