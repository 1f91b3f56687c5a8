import assert from "node:assert/strict";
import { readSexps, type Sexp, SexpSyntaxError, stringValue, symbolName } from "./sexp.ts";

/** A datum without offsets, for deepEqual. */
function plain(node: Sexp): unknown {
  switch (node.type) {
    case "list":
      return node.items.map(plain);
    case "symbol":
      return { symbol: node.name };
    case "number":
      return node.value;
    case "string":
      return node.value;
    case "regex":
      return { regex: node.source };
  }
}

Deno.test("reads nested lists of symbols, numbers, strings and regexes, skipping comments", () => {
  const text = [
    '; a comment (with "quotes" and parens)',
    "(version 1)",
    "(deny default) ; trailing comment",
    '(allow file-read* (subpath "/usr/lib") (regex #"^/dev/ttys[0-9]+$"))',
    "(allow signal (target same-sandbox))",
  ].join("\n");
  assert.deepEqual(readSexps(text).map(plain), [
    [{ symbol: "version" }, 1],
    [{ symbol: "deny" }, { symbol: "default" }],
    [{ symbol: "allow" }, { symbol: "file-read*" }, [{ symbol: "subpath" }, "/usr/lib"], [
      { symbol: "regex" },
      {
        regex: "^/dev/ttys[0-9]+$",
      },
    ]],
    [{ symbol: "allow" }, { symbol: "signal" }, [{ symbol: "target" }, { symbol: "same-sandbox" }]],
  ]);
});

Deno.test('string escapes: \\" \\\\ \\n \\t \\r and \\xHH bytes decoded as UTF-8', () => {
  const [node] = readSexps(String.raw`"a\"b\\c\nd\te\rf\x41\xc3\xa9\xF0\x9F\x98\x80"`);
  assert.equal(stringValue(node!), 'a"b\\c\nd\te\rfAé😀');
});

Deno.test("a leading U+FEFF is kept: it is part of the value, not a byte order mark", () => {
  assert.equal(stringValue(readSexps(String.raw`"\xef\xbb\xbfa"`)[0]!), "\ufeffa");
});

Deno.test("a semicolon or parenthesis inside a string is text, not a comment or a list", () => {
  assert.deepEqual(readSexps('("a;b" "(c)")').map(plain), [["a;b", "(c)"]]);
});

Deno.test("string-append of literals is a string; anything else is not", () => {
  const [joined, mixed, bare] = readSexps('(string-append "/a" "/b") (string-append "/a" x) (other "/a")');
  assert.equal(stringValue(joined!), "/a/b");
  assert.equal(stringValue(mixed!), null);
  assert.equal(stringValue(bare!), null);
  assert.equal(symbolName(readSexps("x")[0]), "x");
  assert.equal(symbolName(readSexps('"x"')[0]), null);
});

Deno.test("offsets point at each datum", () => {
  const [list] = readSexps('  (a "b")');
  assert.ok(list?.type === "list");
  assert.deepEqual([list.offset, list.items[0]!.offset, list.items[1]!.offset], [2, 3, 5]);
});

const MALFORMED: readonly [string, string][] = [
  ["(allow", "Unclosed list"],
  [")", "Unexpected )"],
  ['"abc', "Unterminated string"],
  ['"a\\', "Unterminated escape"],
  ['"\\q"', "Unknown escape"],
  ['"\\0"', "Unknown escape"],
  ['"\\x4"', "two hex digits"],
  ['"\\xZZ"', "two hex digits"],
  ['"\\x00"', "NUL"],
  ['"\\xc3"', "not valid UTF-8"],
  ['"\\xff"', "not valid UTF-8"],
  ['"a\nb"', "Raw non-printable"],
  ['"é"', "Raw non-printable"],
  ['#"a\nb"', "Non-printable character in a regex"],
  ['#"abc', "Unterminated regex"],
  ["(quote 'x)", "Unexpected character"],
  ["(a `b)", "Unexpected character"],
  ["(a |b|)", "Unexpected character"],
  ["(a [b])", "Unexpected character"],
  ["(é)", "Unexpected character"],
  ["; comment with \x1b escape", "non-printable"],
];

for (const [text, message] of MALFORMED) {
  Deno.test(`refuses ${JSON.stringify(text)} (${message})`, () => {
    assert.throws(() => readSexps(text), (error: unknown) => {
      assert.ok(error instanceof SexpSyntaxError, String(error));
      assert.ok(error.message.includes(message), error.message);
      assert.ok(error.offset >= 0 && error.offset <= text.length);
      return true;
    });
  });
}

Deno.test("empty text and comments only read as no datum", () => {
  assert.deepEqual(readSexps(""), []);
  assert.deepEqual(readSexps("; only\n; comments\n"), []);
});
