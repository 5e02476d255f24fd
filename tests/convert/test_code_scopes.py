"""Code chunks of languages other than Python carry the class and function they lie in
(docs/ingester.md, "Formats"), read by the grammars tree-sitter-language-pack ships."""

from __future__ import annotations

import pytest

from haiku.core.convert.code_scopes import scopes_for

# language -> (a realistic source, a line inside the method, the headings it lies under)
SOURCES = {
    "javascript": ("class Parser {\n  constructor(argv) {\n    this.argv = argv;\n  }\n\n  parseArgs(argv) {\n"
                   "    const flags = {};\n    return flags;\n  }\n}\n", "const flags", ["Parser", "parseArgs"]),
    "typescript": ("export class Parser {\n  private argv: string[] = [];\n\n  parseArgs(argv: string[]): Map<string, string> {\n"
                   "    const flags = new Map<string, string>();\n    return flags;\n  }\n}\n", "new Map", ["Parser", "parseArgs"]),
    "go": ("package cli\n\ntype Parser struct {\n\targv []string\n}\n\nfunc (p *Parser) ParseArgs(argv []string) map[string]string {\n"
           "\tflags := map[string]string{}\n\treturn flags\n}\n", "flags :=", ["Parser", "ParseArgs"]),
    "rust": ("pub struct Parser {\n    argv: Vec<String>,\n}\n\nimpl Parser {\n    pub fn parse_args(&self) -> usize {\n"
             "        let flags = self.argv.len();\n        flags\n    }\n}\n", "let flags", ["Parser", "parse_args"]),
    "java": ("package cli;\n\npublic class Parser {\n    public Map<String, String> parseArgs(String[] argv) {\n"
             "        Map<String, String> flags = new HashMap<>();\n        return flags;\n    }\n}\n",
             "new HashMap", ["Parser", "parseArgs"]),
    "c": ("#include <stdio.h>\n\nstruct parser { int argc; };\n\nint parse_args(struct parser *p, char **argv) {\n"
          "    int flags = 0;\n    return flags;\n}\n", "int flags", ["parse_args"]),
    "cpp": ("namespace cli {\nclass Parser {\n public:\n  int parse_args(int argc);\n};\n}\n\n"
            "int cli::Parser::parse_args(int argc) {\n  int flags = argc;\n  return flags;\n}\n",
            "int flags", ["cli", "Parser", "parse_args"]),
}  # fmt: skip


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_a_line_of_a_method_lies_under_its_class_and_method(language):
    text, probe, headings = SOURCES[language]
    line = next(i for i, row in enumerate(text.split("\n"), 1) if probe in row)
    scopes = scopes_for(language, text)
    assert scopes is not None and scopes.at(line) == headings


def test_a_language_without_a_grammar_gets_no_scopes():
    assert scopes_for("fortran", "program p\nend program p\n") is None


def test_go_chunks_are_headed_by_the_type_and_method(converter):
    body = "\n".join(f'\tflags["flag_{i}"] = argv[{i % 3}] + "default value number {i}"' for i in range(40))
    text = (
        "package cli\n\ntype Parser struct {\n\targv []string\n}\n\n"
        f"func (p *Parser) ParseArgs(argv []string) map[string]string {{\n\tflags := map[string]string{{}}\n{body}\n"
        "\treturn flags\n}\n"
    )
    document = converter.read(name="cli/parser.go", fmt="code", data=text.encode())
    chunks = converter.chunk(document)
    inside = [chunk for chunk in chunks if "flag_20" in chunk.content]
    assert inside and inside[0].headings == ["Parser", "ParseArgs"], [c.headings for c in chunks]
    assert inside[0].embed_text.startswith("Parser\nParseArgs\n")
