// SPDX-License-Identifier: MIT
// libFuzzer: PluginManifest::parse on any bytes. Every input gives a manifest, valid or
// with errors, the same as the collecting reader's; nothing crashes, hangs or leaks.
#include <switchyard/plugins/manifest.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto m = switchyard::PluginManifest::parse(text);
    // A valid manifest has a name and a library; an invalid one says why.
    if (m.is_valid() ? m.name.empty() || m.library.empty() : m.errors.empty())
        __builtin_trap();
    // The direct read of a well-formed manifest agrees with the collecting reader.
    const auto general = switchyard::detail::parse_manifest_general(text);
    if (m.errors != general.errors || m.to_json() != general.to_json())
        __builtin_trap();
    return 0;
}
