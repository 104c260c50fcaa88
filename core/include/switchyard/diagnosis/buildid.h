// SPDX-License-Identifier: MIT
#pragma once

// The GNU build ID (NT_GNU_BUILD_ID) of a shared object: the identity of its code, which
// changes with every link where a version or a commit may not (a rebuilt working tree).
// What a tuning entry and a report row record as "the code that was measured".

#include <switchyard/core_export.h>

#include <string>

namespace switchyard {

/// The build ID of the ELF file at `path`, as lower-case hex; "" where it has none, or the
/// file cannot be read as ELF (`error`, when given, says why).
SWITCHYARD_CORE_EXPORT std::string file_build_id(const std::string& path,
                                                 std::string* error = nullptr);

/// The build ID of the object loaded in this process that holds `address` (a function of it);
/// "" where it has none.
SWITCHYARD_CORE_EXPORT std::string loaded_build_id(const void* address);

/// The build ID of libswitchyard-core itself: the identity of every built-in cell's code.
SWITCHYARD_CORE_EXPORT std::string core_build_id();

} // namespace switchyard
