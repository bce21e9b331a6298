"""Every key a script touches is declared in KEYS: a static check of our Lua.

Redis documents the rule ("all keys that a script accesses must be explicitly
provided as input key arguments"); a Cluster node runs a script only once every
declared key is there (a computed key escapes that check), and Dragonfly
refuses an undeclared key outright. No Redis enforces it, so this reads the
scripts as the server gets them (``Script.source``: ``common/time.lua``, the
includes, the script) and checks every ``redis.call``/``redis.pcall``:

* the command is a string literal, or a name (then its first argument is taken
  as its key, which every command our scripts dispatch that way has);
* each argument at a key position of that command (:data:`COMMAND_KEYS`) is a
  *key expression*: ``KEYS[...]``; a name every assignment of which is a key
  expression (a ``local``, a plain assignment, or a function's parameter, which
  is assigned the argument of every call of that function in the script); an
  ``a and b or c`` whose results are key expressions; an element of a *key
  table* (``KEYS`` itself, or a table every element of which is a key
  expression), also through ``unpack(t)`` and ``for _, k in ipairs(t)``.

Anything else at a key position is a finding: a concatenation (``prefix .. x``),
``ARGV``, a value read from Redis, a function's result. The check is
conservative (a name assigned a computed value anywhere in its function counts
as computed) and knows one statement shape at a time; it is not a Lua parser.

:func:`strict_prelude` is the same rule enforced at run time: Lua put before a
script that refuses, with an error naming the key, a command whose key is not
one of KEYS (``tests/support/strict_keys.py`` runs the suite that way).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: command -> where its keys are: ("range", first, last, step) in the manner of
#: COMMAND INFO (positions of the arguments after the command, 1-based; a
#: negative ``last`` counts from the end), "streams" (the keys follow STREAMS:
#: the first half of what follows), or None (no key). A command missing here is
#: a finding: add it (test_script_keys_declared checks this table against the
#: server's COMMAND INFO).
COMMAND_KEYS: dict[str, tuple | str | None] = {
    **{
        c: ("range", 1, 1, 1)
        for c in (
            "APPEND",
            "DECR",
            "DECRBY",
            "EXPIRE",
            "EXPIREAT",
            "GET",
            "GETDEL",
            "GETEX",
            "GETSET",
            "HDEL",
            "HEXISTS",
            "HGET",
            "HGETALL",
            "HINCRBY",
            "HINCRBYFLOAT",
            "HKEYS",
            "HLEN",
            "HMGET",
            "HMSET",
            "HRANDFIELD",
            "HSCAN",
            "HSET",
            "HSETNX",
            "HSTRLEN",
            "HVALS",
            "INCR",
            "INCRBY",
            "INCRBYFLOAT",
            "LINDEX",
            "LINSERT",
            "LLEN",
            "LPOP",
            "LPOS",
            "LPUSH",
            "LPUSHX",
            "LRANGE",
            "LREM",
            "LSET",
            "LTRIM",
            "PERSIST",
            "PEXPIRE",
            "PEXPIREAT",
            "PTTL",
            "RPOP",
            "RPUSH",
            "RPUSHX",
            "SADD",
            "SCARD",
            "SET",
            "SETEX",
            "SETNX",
            "PSETEX",
            "SISMEMBER",
            "SMEMBERS",
            "SMISMEMBER",
            "SPOP",
            "SRANDMEMBER",
            "SREM",
            "SSCAN",
            "STRLEN",
            "TTL",
            "TYPE",
            "XACK",
            "XADD",
            "XAUTOCLAIM",
            "XCLAIM",
            "XDEL",
            "XLEN",
            "XPENDING",
            "XRANGE",
            "XREVRANGE",
            "XSETID",
            "XTRIM",
            "ZADD",
            "ZCARD",
            "ZCOUNT",
            "ZINCRBY",
            "ZLEXCOUNT",
            "ZMSCORE",
            "ZPOPMAX",
            "ZPOPMIN",
            "ZRANDMEMBER",
            "ZRANGE",
            "ZRANGEBYLEX",
            "ZRANGEBYSCORE",
            "ZRANK",
            "ZREM",
            "ZREMRANGEBYLEX",
            "ZREMRANGEBYRANK",
            "ZREMRANGEBYSCORE",
            "ZREVRANGE",
            "ZREVRANGEBYSCORE",
            "ZREVRANK",
            "ZSCAN",
            "ZSCORE",
            "GETRANGE",
            "SETRANGE",
            "GETBIT",
            "SETBIT",
            "BITCOUNT",
            "PFADD",
            "DUMP",
            "RESTORE",
            "CL.THROTTLE",
        )
    },
    **{c: ("range", 2, 2, 1) for c in ("XGROUP", "XINFO", "OBJECT")},  # a subcommand, then the key
    **{
        c: ("range", 1, -1, 1)
        for c in (
            "DEL",
            "UNLINK",
            "EXISTS",
            "TOUCH",
            "MGET",
            "WATCH",
            "PFCOUNT",
            "SINTER",
            "SUNION",
            "SDIFF",
        )
    },
    **{
        c: ("range", 1, 2, 1) for c in ("RENAME", "RENAMENX", "LMOVE", "RPOPLPUSH", "SMOVE", "COPY")
    },
    "MSET": ("range", 1, -1, 2),
    "MSETNX": ("range", 1, -1, 2),
    "XREAD": "streams",
    "XREADGROUP": "streams",
    **{c: None for c in ("TIME", "INFO", "PING", "ECHO", "DBSIZE", "RANDOMKEY")},
}

#: COMMAND INFO's "object" (Redis 6.2) answers a subcommand layout we do not use: not compared
NOT_COMPARED = {
    "OBJECT",
    "XGROUP",
    "XINFO",
    "CL.THROTTLE",
    "WATCH",
}  # containers (keys after a subcommand)


@dataclass(frozen=True)
class Tok:
    kind: str  # name, str, num, op
    value: str
    where: str  # "file.lua:line"


@dataclass
class Finding:
    where: str
    command: str
    argument: str
    why: str

    def __str__(self) -> str:
        return f"{self.where}: {self.command} key argument `{self.argument}` {self.why}"


_LONG = re.compile(r"\[(=*)\[")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUM = re.compile(r"0[xX][0-9a-fA-F]+|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_OPS = ("...", "..", "==", "~=", "<=", ">=", "::")
KEYWORDS = {
    "and",
    "break",
    "do",
    "else",
    "elseif",
    "end",
    "false",
    "for",
    "function",
    "goto",
    "if",
    "in",
    "local",
    "nil",
    "not",
    "or",
    "repeat",
    "return",
    "then",
    "true",
    "until",
    "while",
}


def tokenize(text: str, name: str) -> list[Tok]:
    out, i, line, n = [], 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("--", i):
            m = _LONG.match(text, i + 2)
            end = (
                text.find("]" + m.group(1) + "]", m.end()) + len(m.group(0))
                if m
                else text.find("\n", i)
            )
            end = n if end < (m.end() if m else i) else end
            line += text.count("\n", i, end)
            i = end
        elif c in "'\"":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(Tok("str", text[i + 1 : j], f"{name}:{line}"))
            line += text.count("\n", i, j)
            i = j + 1
        elif c == "[" and _LONG.match(text, i):
            m = _LONG.match(text, i)
            end = text.find("]" + m.group(1) + "]", m.end())
            out.append(Tok("str", text[m.end() : end], f"{name}:{line}"))
            line += text.count("\n", i, end)
            i = end + len(m.group(0))
        elif _NAME.match(text, i):
            m = _NAME.match(text, i)
            out.append(Tok("name", m.group(0), f"{name}:{line}"))
            i = m.end()
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            m = _NUM.match(text, i)
            out.append(Tok("num", m.group(0), f"{name}:{line}"))
            i = m.end()
        else:
            op = next((o for o in _OPS if text.startswith(o, i)), c)
            out.append(Tok("op", op, f"{name}:{line}"))
            i += len(op)
    return out


@dataclass
class Func:
    start: int  # index of the body's first token
    end: int  # index of its closing `end`
    parent: Func | None
    params: list[str]
    names: dict[str, Binding] = field(default_factory=dict)
    live: bool = True


@dataclass(eq=False)
class Binding:
    name: str
    func: Func
    values: list = field(default_factory=list)  # (func, start, stop) spans, or "computed"
    elements: list = field(default_factory=list)  # spans written into it as a table
    function: Func | None = None  # a local function's definition


class Script:
    """One script's tokens, its functions and the bindings of its names."""

    def __init__(self, sources: list[tuple[str, str]]) -> None:
        self.toks: list[Tok] = []
        for name, text in sources:
            self.toks.extend(tokenize(text, name))
        self.toks.append(Tok("eof", "", "end"))
        self.close = self._match_brackets()
        self.chunk = Func(0, len(self.toks) - 1, None, [])
        self.owner: list[Func] = [self.chunk] * len(self.toks)
        self.funcs = [self.chunk]
        self._scan_functions()
        self._bind()

    # -- structure ------------------------------------------------------------------------

    def _match_brackets(self) -> dict[int, int]:
        close, stack = {}, []
        pairs = {")": "(", "]": "[", "}": "{"}
        for i, t in enumerate(self.toks):
            if t.kind == "op" and t.value in "([{":
                stack.append(i)
            elif t.kind == "op" and t.value in pairs and stack:
                close[stack.pop()] = i
        return close

    def _scan_functions(self) -> None:
        """Each `function ... end` (blocks counted by function/if/do/repeat ... end/until)."""
        stack: list[tuple[str, Func | None]] = []
        current = self.chunk
        i = 0
        while i < len(self.toks):
            t = self.toks[i]
            self.owner[i] = current
            if t.kind == "name" and t.value == "function":
                j = i + 1
                while self.toks[j].value != "(":
                    j += 1
                stop = self.close[j]
                params = [
                    p.value for p in self.toks[j + 1 : stop] if p.kind == "name" or p.value == "..."
                ]
                func = Func(stop + 1, -1, current, params)
                self.funcs.append(func)
                for k in range(i, stop + 1):
                    self.owner[k] = current
                stack.append(("function", current))
                current = func
                i = stop + 1
                continue
            if t.kind == "name" and t.value in ("if", "do", "repeat"):
                stack.append((t.value, None))
            elif t.kind == "name" and t.value in ("end", "until") and stack:
                kind, outer = stack.pop()
                if kind == "function":
                    current.end = i
                    current = outer
            i += 1

    def expr_end(self, i: int) -> int:
        """The index just past the expression starting at ``i``."""
        toks = self.toks
        while toks[i].value in ("not", "-", "#"):
            i += 1
        t = toks[i]
        if t.kind == "op" and t.value in ("(", "{"):
            i = self.close[i] + 1
        elif t.value == "function":
            i = self._func_at(i).end + 1
        else:
            i += 1
        while True:  # suffixes: .name [e] :name(args) (args) "s" {t}
            v = toks[i].value
            if toks[i].kind != "op" and toks[i].kind != "str":
                break
            if v == "." or v == ":":
                i += 2
            elif toks[i].kind == "op" and v in ("[", "(", "{"):
                i = self.close[i] + 1
            elif toks[i].kind == "str":
                i += 1
            else:
                break
        t = toks[i]
        if (
            t.kind == "op"
            and t.value in ("+", "-", "*", "/", "%", "^", "..", "==", "~=", "<", ">", "<=", ">=")
        ) or t.value in ("and", "or"):
            return self.expr_end(i + 1)
        return i

    def _func_at(self, i: int) -> Func:
        """The function whose `function` keyword is at ``i``."""
        body = self._body(i)
        return next(f for f in self.funcs if f.start == body)

    def _body(self, i: int) -> int:
        j = i + 1
        while self.toks[j].value != "(":
            j += 1
        return self.close[j] + 1

    def exprlist(self, i: int) -> list[tuple[int, int]]:
        spans = []
        while True:
            j = self.expr_end(i)
            spans.append((i, j))
            if self.toks[j].value != ",":
                return spans
            i = j + 1

    def args(self, open_paren: int) -> list[tuple[int, int]]:
        stop = self.close[open_paren]
        return [] if stop == open_paren + 1 else self.exprlist(open_paren + 1)

    # -- names ----------------------------------------------------------------------------

    def declare(self, func: Func, name: str) -> Binding:
        if name not in func.names:
            func.names[name] = Binding(name, func)
        return func.names[name]

    def resolve(self, func: Func, name: str) -> Binding | None:
        while func is not None:
            if name in func.names:
                return func.names[name]
            func = func.parent
        return None

    def _bind(self) -> None:
        toks = self.toks
        for func in self.funcs[1:]:
            for p in func.params:
                self.declare(func, p)
        for i, t in enumerate(toks):
            func = self.owner[i]
            if t.value == "local" and toks[i + 1].value == "function":
                b = self.declare(func, toks[i + 2].value)
                b.function = self._func_at(i + 1)
            elif (
                t.value == "function"
                and toks[i - 1].value != "local"
                and toks[i + 1].kind == "name"
            ):
                b = self.declare(self.chunk, toks[i + 1].value)  # a global function
                b.function = self._func_at(i)
            elif t.value == "local":
                j, names = i + 1, []
                while toks[j].kind == "name":
                    names.append(toks[j].value)
                    j += 1
                    if toks[j].value == "<":  # Lua 5.4 attributes: not in Redis' 5.1
                        j = self.close.get(j, j + 2) + 1
                    if toks[j].value != ",":
                        break
                    j += 1
                for name in names:
                    self.declare(func, name)
                if toks[j].value == "=":
                    self._assign([(func, n) for n in names], self.exprlist(j + 1), func)
            elif t.value == "for":
                j, names = i + 1, []
                while toks[j].kind == "name" and toks[j].value not in KEYWORDS:
                    names.append(toks[j].value)
                    j += 1 if toks[j + 1].value != "," else 2
                for name in names:
                    self.declare(func, name).values.append("computed")
                if (
                    toks[j].value == "in"
                    and len(names) == 2
                    and toks[j + 1].value in ("ipairs", "pairs")
                ):
                    inner = self.exprlist(j + 3)  # for _, k in ipairs(t): k is an element of t
                    self.declare(func, names[1]).values[:] = [("element", func, *inner[0])]
        self._plain_assignments()
        self._calls()

    def _assign(self, targets, spans, func) -> None:
        for n, (f, name) in enumerate(targets):
            b = self.resolve(f, name) or self.declare(self.chunk, name)
            b.values.append(
                self._value(func, spans[n]) if n < len(spans) else "computed"
            )  # (a call's extra results)

    def _value(self, func: Func, span: tuple[int, int]):
        return "nil" if self.text(*span) in ("nil", "false") else (func, *span)

    def _plain_assignments(self) -> None:
        """``a, t[i] = x, y`` (not ``local``): a statement-level ``=`` and the targets before it."""
        toks = self.toks
        closers = set(self.close.values())
        opener = {c: o for o, c in self.close.items()}
        inside, level = [0] * len(toks), 0
        for i, t in enumerate(toks):
            inside[i] = level
            if t.kind == "op" and t.value in "([{" and i in self.close:
                level += 1
            elif t.kind == "op" and i in closers:
                level -= 1
        for i, t in enumerate(toks):
            if not (t.kind == "op" and t.value == "=") or inside[i]:
                continue
            j = i - 1  # walk back over the target list: names, `.name`, `[...]`, commas
            while j >= 0:
                v = toks[j]
                if v.kind == "op" and v.value == "]":
                    j = opener[j] - 1
                elif v.kind == "name" and v.value not in KEYWORDS:
                    if toks[j - 1].value in (".", ","):
                        j -= 2 if toks[j - 1].value == "." else 1
                        if toks[j].value == ",":
                            j -= 1
                        continue
                    break
                else:
                    break
            start = j
            if toks[start - 1].value == "local":
                continue
            func = self.owner[i]
            targets, k = [], start
            while k < i:  # split at commas
                m = k
                while m < i and toks[m].value != ",":
                    m = self.close[m] + 1 if toks[m].value == "[" else m + 1
                targets.append((k, m))
                k = m + 1
            spans = self.exprlist(i + 1)
            for n, (a, b) in enumerate(targets):
                value = self._value(func, spans[n]) if n < len(spans) else "computed"
                binding = self.resolve(func, toks[a].value) or self.declare(
                    self.chunk, toks[a].value
                )
                if b - a == 1:
                    binding.values.append(value)
                else:
                    binding.elements.append(value)  # t[i] = ..., t.x = ...

    def _calls(self) -> None:
        """A live call of a named function assigns its parameters (a function also used as a value
        gets unknown ones); ``table.insert(t, v)`` writes into t. The chunk is live, so is an
        anonymous function in live code, and a named function called or used as a value from live
        code: a helper a script does not use is not checked with it (it is checked with the
        scripts that use it)."""
        toks = self.toks
        sites = []  # (where, the function named, its arguments or None when used as a value)
        anonymous = []
        for i, t in enumerate(toks):
            if t.value == "function" and t.kind == "name" and toks[i + 1].value == "(":
                anonymous.append((self.owner[i], self._func_at(i)))
            if t.value == "insert" and toks[i - 2].value == "table" and toks[i + 1].value == "(":
                args = self.args(i + 1)
                target = self.resolve(self.owner[i], toks[args[0][0]].value) if args else None
                if target and args[0][1] - args[0][0] == 1:
                    target.elements.append(self._value(self.owner[i], args[-1]))
                continue
            if t.kind != "name" or toks[i - 1].value in (".", ":", "function"):
                continue
            b = self.resolve(self.owner[i], t.value)
            if b is not None and b.function is not None:
                if (
                    toks[i - 2].value == "pcall"
                    and toks[i - 1].value == "("
                    and toks[i + 1].value == ","
                ):
                    sites.append(
                        (self.owner[i], b.function, self.args(i - 1)[1:])
                    )  # pcall(f, a, b): f(a, b)
                else:
                    sites.append(
                        (
                            self.owner[i],
                            b.function,
                            self.args(i + 1) if toks[i + 1].value == "(" else None,
                        )
                    )
        live = {id(self.chunk)}
        grown = True
        while grown:
            grown = False
            for where, func, _ in sites:
                if id(where) in live and id(func) not in live:
                    live.add(id(func))
                    grown = True
            for where, func in anonymous:
                if id(where) in live and id(func) not in live:
                    live.add(id(func))
                    grown = True
        for func in self.funcs:
            func.live = id(func) in live
        for where, func, args in sites:
            if not where.live:
                continue
            for n, p in enumerate(func.params):
                if p == "...":
                    break
                if args is None:
                    value = "computed"
                elif n >= len(args) or self.text(*args[n]) in ("nil", "false"):
                    value = "nil"  # a missing argument is nil
                else:
                    value = (where, *args[n])
                func.names[p].values.append(value)

    # -- key expressions ------------------------------------------------------------------

    def is_key(self, func: Func, a: int, b: int, seen: frozenset = frozenset()) -> bool:
        toks = self.toks
        while toks[a].kind == "op" and toks[a].value == "(" and self.close[a] == b - 1:
            a, b = a + 1, b - 1
        parts = self._split(a, b, "or")
        if len(parts) > 1:
            return all(self.is_key(func, *self._split(x, y, "and")[-1], seen) for x, y in parts)
        if len(self._split(a, b, "and")) > 1:
            return self.is_key(func, *self._split(a, b, "and")[-1], seen)
        if toks[a].kind != "name" or toks[a].value in KEYWORDS:
            return False
        if b - a == 1 and toks[a].value in ("nil", "false"):
            return False
        if b - a == 1:
            binding = self.resolve(func, toks[a].value)
            return binding is not None and self.binding_is_key(binding, seen)
        if toks[a + 1].kind == "op" and toks[a + 1].value == "[" and self.close[a + 1] == b - 1:
            return self.is_key_table(func, a, seen)
        return False

    def _split(self, a: int, b: int, word: str) -> list[tuple[int, int]]:
        parts, start, i = [], a, a
        while i < b:
            v = self.toks[i].value
            if self.toks[i].kind == "op" and v in "([{" and i in self.close:
                i = self.close[i] + 1
                continue
            if v == "function" and self.toks[i].kind == "name":
                i = self._func_at(i).end + 1
                continue
            if v == word and self.toks[i].kind == "name":
                parts.append((start, i))
                start = i + 1
            i += 1
        parts.append((start, b))
        return parts

    def binding_is_key(self, binding: Binding, seen: frozenset) -> bool:
        if binding in seen:
            return True  # a cycle adds nothing computed
        seen = seen | {binding}
        if not binding.values or binding.function is not None:
            return False
        for v in binding.values:
            if v == "nil":
                # nil never reaches a command as a key (it would be refused as an argument)
                continue
            if v == "computed":
                return False
            if v[0] == "element":  # for _, k in ipairs(t)
                if not self.is_key_list(*v[1:], seen):
                    return False
            elif not self.is_key(*v, seen):
                return False
        return True

    def is_key_list(self, func: Func, a: int, b: int, seen: frozenset = frozenset()) -> bool:
        """The expression a..b is a table of keys: a key table's name, or a constructor of key
        expressions."""
        if b - a == 1:
            return self.is_key_table(func, a, seen)
        if self.toks[a].kind == "op" and self.toks[a].value == "{" and self.close[a] == b - 1:
            return all(self.is_key(func, x, y, seen) for x, y in self.args_of_table(a))
        return False

    def is_key_table(self, func: Func, a: int, seen: frozenset = frozenset()) -> bool:
        """The table named at token ``a`` holds only keys: KEYS, or built only of key
        expressions."""
        name = self.toks[a].value
        if name == "KEYS" and self.resolve(func, "KEYS") is None:
            return True
        binding = self.resolve(func, name)
        if binding is None or binding in seen:
            return binding is not None
        seen = seen | {binding}
        if not binding.values:
            return False
        for v in binding.values:
            if v == "nil":
                continue
            if v == "computed" or v[0] == "element":
                return False
            f, x, y = v
            if self.toks[x].kind == "op" and self.toks[x].value == "{" and self.close[x] == y - 1:
                for ex, ey in self.args_of_table(x):
                    if not self.is_key(f, ex, ey, seen):
                        return False
            elif not (y - x == 1 and self.is_key_table(f, x, seen)):
                return False
        return all(
            v == "nil" or (v != "computed" and self.is_key(*v, seen)) for v in binding.elements
        )

    def args_of_table(self, open_brace: int) -> list[tuple[int, int]]:
        out, i, stop = [], open_brace + 1, self.close[open_brace]
        while i < stop:
            if (
                self.toks[i].kind == "name"
                and self.toks[i + 1].value == "="
                or self.toks[i].value == "["
            ):
                return [(open_brace, stop + 1)]  # keyed fields: not a list of keys
            j = self.expr_end(i)
            out.append((i, j))
            i = j + 1
        return out

    def _live(self, func: Func) -> bool:
        return func.live

    def text(self, a: int, b: int) -> str:
        return " ".join(t.value if t.kind != "str" else repr(t.value) for t in self.toks[a:b])

    # -- the check --------------------------------------------------------------------------

    def findings(self) -> list[Finding]:
        toks, found = self.toks, []
        for i, t in enumerate(toks):
            if not (
                t.value == "redis"
                and toks[i + 1].value == "."
                and toks[i + 2].value in ("call", "pcall")
            ):
                continue
            func = self.owner[i]
            if not self._live(func):
                continue
            if toks[i + 3].value == "(":
                args = self.args(i + 3)
            elif (
                toks[i - 1].value == "("
                and toks[i - 2].value == "pcall"
                and toks[i + 3].value == ","
            ):
                args = self.args(i - 1)[1:]  # pcall(redis.call, cmd, ...)
            else:
                found.append(
                    Finding(
                        t.where,
                        f"redis.{toks[i + 2].value}",
                        "",
                        "(used as a value: its keys cannot be checked)",
                    )
                )
                continue
            if not args:
                continue
            first = toks[args[0][0]]
            if first.kind == "str" and args[0][1] - args[0][0] == 1:
                command = first.value.upper()
                if command not in COMMAND_KEYS:
                    found.append(
                        Finding(
                            t.where,
                            command,
                            "",
                            "(unknown command: add its key positions to COMMAND_KEYS)",
                        )
                    )
                    continue
                positions = key_positions(COMMAND_KEYS[command], [self.text(*s) for s in args[1:]])
            else:
                command = self.text(*args[0])
                positions = [1]  # a command named by a value: its first argument is its key
            rest = args[1:]
            for n, span in enumerate(rest):
                if toks[span[0]].value in ("unpack",) or (
                    toks[span[0]].value == "table" and toks[span[0] + 2].value == "unpack"
                ):
                    if any(p >= n + 1 for p in positions):
                        open_paren = span[0] + 1 if toks[span[0]].value == "unpack" else span[0] + 3
                        inner = self.args(open_paren)
                        if not (
                            inner
                            and inner[0][1] - inner[0][0] == 1
                            and self.is_key_table(func, inner[0][0])
                        ):
                            found.append(
                                Finding(
                                    t.where,
                                    command,
                                    self.text(*span),
                                    "unpacks a table that holds more than KEYS",
                                )
                            )
                    break
                if n + 1 in positions and not self.is_key(func, *span):
                    found.append(Finding(t.where, command, self.text(*span), "is not one of KEYS"))
        return found


def key_positions(spec, args: list[str]) -> list[int]:
    """1-based positions of the key arguments of a command with these (textual) arguments."""
    if spec is None:
        return []
    if spec == "streams":
        upper = [a.strip("'\"").upper() for a in args]
        if "STREAMS" not in upper:
            return []
        at = upper.index("STREAMS") + 1
        return list(range(at + 1, at + 1 + (len(args) - at) // 2))
    _, first, last, step = spec
    last = len(args) + 1 + last if last < 0 else last
    return list(range(first, last + 1, step))


def check(sources: list[tuple[str, str]]) -> list[Finding]:
    """The findings in one script, given as its parts in order: [(file name, text)]."""
    return Script(sources).findings()


# -- the same rule at run time
# ----------------------------------------------------------------------


def strict_prelude() -> str:
    """Lua to put first in a script (after a ``#!lua`` line): from there on ``redis.call`` and
    ``redis.pcall`` raise an error naming any key argument that is not one of KEYS. One line, so
    the script's own line numbers in error messages only move by one."""
    ranges = ",".join(
        f"[{_lua_str(c)}]={{{s[1]},{s[2]},{s[3]}}}"
        for c, s in COMMAND_KEYS.items()
        if isinstance(s, tuple)
    )
    none = ",".join(f"[{_lua_str(c)}]=true" for c, s in COMMAND_KEYS.items() if s is None)
    return (
        f"local redis = (function(real) local declared = {{}} for _, k in ipairs(KEYS) do "
        f"declared[k] = true end local ranges, none = {{{ranges}}}, {{{none}}} local function "
        f"check(cmd, ...) local args, name = {{...}}, string.upper(tostring(cmd)) local function "
        "bad(k) if not declared[k] then error('REDCOORD-UNDECLARED-KEY ' .. name .. ' touches ' "
        ".. tostring(k) .. ', not one of KEYS', 3) end end if none[name] then return end if name "
        "== 'XREAD' or name == 'XREADGROUP' then for i, a in ipairs(args) do if "
        "string.upper(tostring(a)) == 'STREAMS' then for j = i + 1, i + math.floor((#args - i) / "
        "2) do bad(args[j]) end return end end return end local r = ranges[name] if not r then "
        "error('REDCOORD-UNDECLARED-KEY unknown command ' .. name .. ' (add it to "
        "tests/support/lua_keys.py)', 3) end local last = r[2] < 0 and #args + 1 + r[2] or "
        "r[2] for i = "
        f"r[1], math.min(last, #args), r[3] do bad(args[i]) end end return setmetatable({{call = "
        "function(cmd, ...) check(cmd, ...) return real.call(cmd, ...) end, pcall = function(cmd, "
        f"...) check(cmd, ...) return real.pcall(cmd, ...) end}}, {{__index = real}}) end)(redis)\n"
    )


def _lua_str(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def with_prelude(source: str) -> str:
    """``source`` with :func:`strict_prelude` first (after its ``#!lua`` line, if any)."""
    if source.startswith("#!"):
        head, _, body = source.partition("\n")
        return f"{head}\n{strict_prelude()}{body}"
    return strict_prelude() + source


#: Scripts that touch a key they cannot declare, and why (tests/core/test_script_keys_declared.py
#: fails when one of them no longer does, so the list stays exact). The fix each would need is
#: in the README's statement on declared keys.
KNOWN_UNDECLARED = {
    "admin/read_slots": "the admin's read of a Cluster node's per-slot index buckets: the keys of "
    "many slots, which one call cannot declare (CROSSSLOT); runs with "
    "allow-cross-slot-keys and no-writes, on a Cluster only",
    "queues/depths": "the consumers' processing lists are named by the members of the consumers "
    "zset (KEYS[4]): LLEN of each",
    "queues/sample": "the consumers' processing lists are named by the members of the consumers "
    "zset (KEYS[3]): LLEN of each",
    "queues/reap": "the processing lists of dead consumers are named by the members of the "
    "consumers zset (KEYS[1]): LRANGE and DEL of each",
}


def discover_scripts() -> dict:
    """Every ``Script`` our package defines (module-level constants), by name: imports each
    module."""
    import importlib
    import pkgutil

    import django_redcoord
    from django_redcoord.core.transport.scripts import Script as RedisScript

    found = {}
    for info in pkgutil.walk_packages(django_redcoord.__path__, "django_redcoord."):
        try:
            module = importlib.import_module(info.name)
        except ImportError as exc:  # an optional extra not installed here
            if (exc.name or "").startswith("django_redcoord"):
                raise
            continue
        for value in vars(module).values():
            if isinstance(value, RedisScript):
                found[value.name] = value
    return found


def parts_of(script) -> list[tuple[str, str]]:
    """A ``Script``'s files in the order its source joins them: [(file name, text)]."""
    from django_redcoord.core.transport.scripts import _SHARED, _read

    return [(f"{name}.lua", _read(name)) for name in (*_SHARED, *script.includes, script.name)]
