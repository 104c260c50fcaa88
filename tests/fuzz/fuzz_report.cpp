// SPDX-License-Identifier: MIT
// libFuzzer: Report::parse on any bytes, then what the CLI does with a report it read
// (compare it with itself, render it as text, JSON and CSV). A bad report is a
// ReportError; nothing crashes, hangs or leaks.
#include <switchyard/report/compare.h>
#include <switchyard/report/report.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace switchyard;
    try {
        const auto report =
            Report::parse(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
        const auto c = Comparison::of(report, report);
        (void)c.to_text();
        (void)c.to_json().dump();
        (void)report.to_json().dump();
        (void)report.to_csv();
    } catch (const ReportError&) {
    }
    return 0;
}
