#include "python/docs.hpp"

#include <regex>
#include <utility>

#include "codegen/emit_common.hpp"

namespace codegen::python {

std::string clean_doc(const std::string& doc) {
  std::string s = doc;
  static const std::vector<std::pair<std::regex, std::string>> rules = {
      {std::regex(R"(\\ingroup\s+\S+\s*)"), ""},
      {std::regex(R"(\\brief\s+)"), ""},
      {std::regex(R"(\\(p|c|e|a|b)\s+)"), ""},
      {std::regex(R"(\\ref\s+)"), ""},
      {std::regex(R"(\\link\s+#?(\S+)\s*([^\\]*)\\endlink)"), "$2"},
      {std::regex(R"(::)"), ""},
      {std::regex(R"(\\notefnerr|\\note_[a-z_]+|\\note\b)"), "Note:"},
      {std::regex(R"(\\sa\b)"), "See also:"},
      {std::regex(R"(\\return)"), "Returns:"},
      {std::regex(R"(\\param\s*(\[[a-z,]+\])?\s+)"), "- "},
      {std::regex(R"(""")"), "\"\"\\\""},
      {std::regex(R"(\\)"), "\\\\"},
  };
  for (const auto& [re, repl] : rules) s = std::regex_replace(s, re, repl);
  // Collapse runs of blank lines.
  static const std::regex blank_re(R"(\n\s*\n(\s*\n)+)");
  return std::regex_replace(s, blank_re, "\n\n");
}

std::string docstring(const std::string& text, const std::string& indent_prefix) {
  std::string body = text;
  while (!body.empty() && (body.back() == '\n' || body.back() == ' ')) body.pop_back();
  while (!body.empty() && (body.front() == '\n' || body.front() == ' ')) body.erase(0, 1);
  if (body.empty()) return "";
  const std::string indented = indent(body, indent_prefix);
  return indent_prefix + "\"\"\"" + indented.substr(indent_prefix.size()) + indent_prefix + "\"\"\"\n";
}

std::string py_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace codegen::python
