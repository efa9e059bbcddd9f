// Text of the Python modules: docstrings from the header documentation and
// Python string literals. Private to the Python emitter.
#pragma once

#include <string>
#include <vector>

namespace codegen::python {

// Doxygen commands of the header documentation turned into plain text.
std::string clean_doc(const std::string& doc);

// A docstring indented by `indent_prefix`, or "" for empty text.
std::string docstring(const std::string& text, const std::string& indent_prefix);

// A double-quoted Python string literal.
std::string py_string(const std::string& s);

// "a, b, c".
std::string join(const std::vector<std::string>& v);

}  // namespace codegen::python
