// Helpers shared by the emitters.
#pragma once

#include <string>
#include <vector>

#include "codegen/emitters.hpp"
#include "codegen/ir.hpp"

namespace codegen {

// `type name`, with the name inside a function pointer or before array extents:
// declarator("void (*)(void *)", "fn") == "void (*fn)(void *)".
std::string declarator(const std::string& type, const std::string& name);

// The C function pointer type of a function: "CUresult (*)(unsigned int)".
std::string function_type(const Type& result, const std::vector<Param>& params);

// The first line of a doc comment, without \brief.
std::string first_sentence(const std::string& doc);

// The name a .pxd gives a C field or parameter: words Cython reserves get a
// trailing '_' (the C name is kept as a cname string).
std::string cython_member(const std::string& name);

// A Python identifier for a C name: Python and Cython keywords get a trailing '_'.
std::string python_identifier(const std::string& name);

// Every non-empty line prefixed.
std::string indent(const std::string& text, const std::string& prefix);

}  // namespace codegen
