// Annotations: what the headers cannot say, one YAML file per library
// (codegen/annotations/<library>.yaml), checked against a fixed schema.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/ir.hpp"

namespace codegen {

// A malformed annotation file: the message starts with "file:line:column:".
class AnnotationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ParamAnnotation {
  std::string direction;  // in, out, inout
  std::string count;      // an array of this many elements (another parameter)
  std::string size;       // a caller-sized buffer of this many bytes (another parameter)
  std::string typed_by;   // a void* whose type the named attribute parameter selects
  std::string size_from;  // a caller-allocated buffer whose size this function reports
  int nullable = 0;       // 1 / -1: whether the pointer takes NULL, overriding the documentation
  std::string value;      // not a Python argument: always this value (a number or a macro of the header)
  std::string python_name;  // the Python parameter's name, where it is not the C name's (handle for handle_indirect)
  bool address = false;     // the pointer is given as an int address (cuda.bindings' intptr_t), whatever it points to
  std::string default_value;  // the Python argument's default
  std::vector<std::string> fields;               // a struct's fields given as Python arguments
  std::map<std::string, std::string> field_names;  // their Python names, where not the snake_case field name
  std::vector<std::string> returns;              // the fields the call returns (one, or a tuple of several)
  std::string returns_count;                     // ...of this many elements (a pointer field)
  std::map<std::string, std::string> buffers;    // pointer field -> the field counting its array
  std::map<std::string, std::string> queried;    // pointer field -> its count field, asked for first
  std::string bytes_of;                          // the byte size of another (array) parameter
  std::string filled;                            // an array of a fixed count: the output saying how many items it filled
  std::vector<std::string> item_fields;          // a struct array's items may be ints or tuples of these fields
  std::vector<std::string> bytes_fields;         // of `fields`, those given as bytes or str, copied into the field
  std::map<std::string, std::string> sizes;      // byte array field -> the field holding its length in bytes
  std::map<std::string, std::string> arrays;     // pointer field -> its count: the caller's array of structs
  unsigned line = 0;
};

struct FunctionAnnotation {
  std::map<std::string, ParamAnnotation> params;
  std::string skip;       // not bound, with this reason
  std::string introduced; // the CUDA version that introduced it, for the loader's error
  std::string release_on_error;  // frees the handle it outputs when it fails (nvJitLinkDestroy)
  std::string makes_handle;      // the output parameter of a handle the raw layer records as live
  std::string destroys_handle;   // the parameter of a handle it destroys, no longer live
  bool status_value = false;     // returns its status as a value rather than raising it (cudlaGetLastError)
  unsigned line = 0;
};

// The C type of the value an attribute enum's member selects, for a void *
// parameter typed_by that attribute: "CUcontext", "unsigned int", "int[4]".
struct AttributeType {
  std::string type;
  unsigned line = 0;
};

struct Annotations {
  std::string file;
  LibraryDescriptor library;  // the `library:` block
  std::map<std::string, FunctionAnnotation> functions;
  std::map<std::string, std::map<std::string, AttributeType>> attribute_types;  // enum -> member -> type
};

// Reads and validates one file. Throws AnnotationError.
Annotations load_annotations(const std::string& path);
// The same from text (tests); `file` names it in errors.
Annotations parse_annotations(const std::string& text, const std::string& file);

// Classifies every parameter of every function (rules first, then the
// annotations, which win) and records skips. Returns the problems `check`
// reports: parameters classified by nothing, annotations naming nothing.
std::vector<std::string> classify(Library& library, const Annotations& annotations);

// The parameter a count names: `tensorRank` for `tensorRank - 1` (a count may
// be a parameter less a constant), else the count itself.
std::string count_parameter(const std::string& count);

}  // namespace codegen
