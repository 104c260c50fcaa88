// SPDX-License-Identifier: MIT
#include <switchyard/profiling/fingerprint.h>

#include <switchyard/buildinfo.h>
#include <switchyard/hardware/hardware.h>
#include <switchyard/hardware/hostgpus.h>
#include <switchyard/kernels/probes.h>
#include <switchyard/sdk/version.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <string>

namespace switchyard {

namespace {

std::string size_text(std::int64_t bytes) {
    char buf[32];
    if (bytes >= (std::int64_t(1) << 20) && bytes % (std::int64_t(1) << 20) == 0)
        std::snprintf(buf, sizeof buf, "%" PRId64 " MiB", bytes >> 20);
    else
        std::snprintf(buf, sizeof buf, "%" PRId64 " KiB", bytes >> 10);
    return buf;
}

std::string caches_text(const CpuInfo& cpu) {
    std::string out;
    for (const auto& c : cpu.caches) {
        if (c.type == "instruction")
            continue;
        if (!out.empty())
            out += ", ";
        out += "L" + std::to_string(c.level) + (c.type == "data" ? "d " : " ") +
               size_text(c.size_bytes);
    }
    return out;
}

} // namespace

std::string cpu_microcode() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("microcode", 0) != 0)
            continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos)
            return {};
        auto v = line.substr(colon + 1);
        const auto b = v.find_first_not_of(" \t");
        return b == std::string::npos ? std::string() : v.substr(b);
    }
    return {};
}

std::string fingerprint_id(const nlohmann::json& machine) {
    std::uint64_t h = 0xcbf29ce484222325ULL;     // FNV-1a: stable across builds and libraries
    for (const unsigned char c : machine.dump()) // nlohmann's objects are key-ordered
        h = (h ^ c) * 0x100000001b3ULL;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
    return buf;
}

nlohmann::json machine_fingerprint() {
    const auto& cpu = cpu_info();
    const auto host = host_info();
    const auto blas = openblas_info();
    auto gpus = nlohmann::json::array();
    for (const auto& g : host_gpus())
        gpus.push_back({{"vendor", g.vendor}, // not the PCI address: nodes of a class differ

                        {"model", g.vendor_id + ":" + g.device_id},
                        {"name", g.name},
                        {"driver", g.driver},
                        {"driver_version", g.driver_version}});
    nlohmann::json machine = {
        {"cpu",
         {{"vendor", cpu.vendor},
          {"brand", cpu.brand},
          {"family", cpu.family},
          {"model", cpu.model},
          {"stepping", cpu.stepping},
          {"microcode", cpu_microcode()},
          {"logical_cpus", cpu.logical_cpus},
          {"physical_cores", cpu.physical_cores},
          {"caches", caches_text(cpu)}}},
        {"memory_gib", (host.memory_bytes + (std::int64_t(1) << 29)) >> 30},
        {"isa",
         {{"best", cpu.best_level},
          {"detected",
           cpu.detected_isa_levels.empty() ? cpu.best_level : cpu.detected_isa_levels.back()},
          {"cap", cpu.isa_cap}}},
        {"gpus", gpus},
        {"openblas", {{"core", blas.present ? blas.corename : ""}, {"threads", blas.threads}}},
    };
    nlohmann::json software = {{"switchyard",
                                {{"version", std::string(core_version())},
                                 {"git_hash", std::string(core_git_hash())},
                                 {"build_type", std::string(core_build_type())},
                                 {"compiler", SWITCHYARD_COMPILER}}},
                               {"os", host.os}};
    const auto id = fingerprint_id(machine);
    return {{"machine", std::move(machine)}, {"software", std::move(software)}, {"machine_id", id}};
}

} // namespace switchyard
