// Writing generated files: all or nothing, and only what changed.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "codegen/emitters.hpp"

namespace codegen {

// Writes every file under `root` (created when missing). Each file goes to a
// temporary name first; only when all were written are they renamed into
// place, so a failure leaves the previous output as it was. Files whose
// content is unchanged are not touched. Returns how many changed.
std::size_t write_files(const std::string& root, const std::vector<GeneratedFile>& files);

}  // namespace codegen
