#!/usr/bin/env python3
"""test/tools/sql_c_functions.py SCRIPT...

Prints, one a line and sorted, the C symbols that the extension's SQL
scripts bind functions to: for each CREATE [OR REPLACE] FUNCTION or
PROCEDURE in LANGUAGE C whose object file is the module's
('MODULE_PATHNAME' or '$libdir/subsetting'), the link symbol of
AS 'obj', 'symbol', or the function's own name when AS gives only the
object file.  Comments, psql meta-commands (\\echo ... \\quit), quoted
strings and dollar-quoted bodies are read as psql and SQL read them, so a semicolon or a CREATE inside a PL/pgSQL body is
not taken for a statement.  Fails (exit status 1) if a LANGUAGE C
function is bound to no object file of the module."""
import re
import sys

MODULE_FILES = {"MODULE_PATHNAME", "$libdir/subsetting"}


def statements(sql):
    """The statements of an SQL script, each a list of tokens:
    ('word', text), ('string', value), ('quoted', identifier), ('punct', c)."""
    tokens = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c.isspace():
            i += 1
        elif sql.startswith("--", i) or c == "\\":	# a comment, or a psql meta-command
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
        elif sql.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if sql.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif sql.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "'" or ((c in "eE") and sql.startswith("'", i + 1)):
            i += 1 if c == "'" else 2
            value = []
            while i < n:
                if sql[i] == "'" and sql.startswith("''", i):
                    value.append("'")
                    i += 2
                elif sql[i] == "'":
                    i += 1
                    break
                else:
                    value.append(sql[i])
                    i += 1
            tokens.append(("string", "".join(value)))
        elif c == '"':
            j = i + 1
            value = []
            while j < n:
                if sql.startswith('""', j):
                    value.append('"')
                    j += 2
                elif sql[j] == '"':
                    break
                else:
                    value.append(sql[j])
                    j += 1
            tokens.append(("quoted", "".join(value)))
            i = j + 1
        elif c == "$" and re.match(r"\$([A-Za-z_][A-Za-z_0-9]*)?\$", sql[i:]):
            tag = re.match(r"\$([A-Za-z_][A-Za-z_0-9]*)?\$", sql[i:]).group(0)
            j = sql.find(tag, i + len(tag))
            j = n if j < 0 else j
            tokens.append(("string", sql[i + len(tag):j]))
            i = j + len(tag)
        elif c.isalnum() or c == "_":
            m = re.match(r"[A-Za-z_0-9$]+", sql[i:])
            tokens.append(("word", m.group(0)))
            i += len(m.group(0))
        elif c == ";":
            yield tokens
            tokens = []
            i += 1
        else:
            tokens.append(("punct", c))
            i += 1
    if tokens:
        yield tokens


def c_functions(tokens):
    """(is LANGUAGE C, the symbol or None) of one statement."""
    words = [t[1].lower() if t[0] == "word" else None for t in tokens]
    language_c = any(words[k] == "language" and k + 1 < len(tokens) and
                     tokens[k + 1][1].lower() == "c" for k in range(len(tokens)))
    k = 0
    while k < len(words) and words[k] in ("create", "or", "replace"):
        k += 1
    if k == 0 or k >= len(words) or words[k] not in ("function", "procedure"):
        return language_c, None
    # the name, perhaps schema-qualified, is the last identifier before "("
    name = None
    for t in tokens[k + 1:]:
        if t == ("punct", "("):
            break
        if t[0] == "quoted":
            name = t[1]
        elif t[0] == "word":
            name = t[1].lower()
    if not language_c:
        return False, None
    for a in range(len(tokens) - 1):
        if words[a] == "as" and tokens[a + 1][0] == "string" and tokens[a + 1][1] in MODULE_FILES:
            if a + 3 < len(tokens) and tokens[a + 2] == ("punct", ",") and tokens[a + 3][0] == "string":
                return True, tokens[a + 3][1]
            return True, name
    return True, None


def main():
    symbols = set()
    unbound = 0
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            for tokens in statements(f.read()):
                is_c, symbol = c_functions(tokens)
                if symbol:
                    symbols.add(symbol)
                elif is_c:
                    unbound += 1
                    print("%s: a LANGUAGE C statement without the module's object file: %s"
                          % (path, " ".join(t[1] for t in tokens[:6])), file=sys.stderr)
    for s in sorted(symbols):
        print(s)
    sys.exit(1 if unbound else 0)


if __name__ == "__main__":
    main()
