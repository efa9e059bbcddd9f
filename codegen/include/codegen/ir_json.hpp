// The IR as JSON, for `dump-ir` and for reviewing what the front end saw.
#pragma once

#include <nlohmann/json.hpp>

#include "codegen/ir.hpp"

namespace codegen {

nlohmann::ordered_json to_json(const Library& library);

}  // namespace codegen
