// SPDX-License-Identifier: MIT
// libFuzzer: PluginManifest::parse on any bytes. Every input gives a manifest, valid or
// with errors; nothing crashes, hangs or leaks.
#include <switchyard/plugins/manifest.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto m = switchyard::PluginManifest::parse(
        std::string_view(reinterpret_cast<const char*>(data), size));
    // A valid manifest has a name and a library; an invalid one says why.
    if (m.is_valid() ? m.name.empty() || m.library.empty() : m.errors.empty())
        __builtin_trap();
    return 0;
}
