// SPDX-License-Identifier: MIT
#include <switchyard/hardware/hostgpus.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace switchyard {

namespace fs = std::filesystem;

namespace {

std::string first_line(const fs::path& file) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' '))
        line.pop_back();
    return line;
}

// "0x10de" -> "10de"
std::string hex_id(std::string text) {
    if (text.rfind("0x", 0) == 0)
        text = text.substr(2);
    return text;
}

// The vendors whose display controllers run compute kernels.
const char* compute_vendor(const std::string& id) {
    static const std::pair<const char*, const char*> vendors[] = {
        {"10de", "NVIDIA"},   {"1002", "AMD"},      {"8086", "Intel"},   {"1ed5", "Moore Threads"},
        {"5143", "Qualcomm"}, {"1e3e", "Iluvatar"}, {"1d17", "Zhaoxin"},
    };
    for (const auto& [vid, name] : vendors)
        if (id == vid)
            return name;
    return nullptr;
}

// NVIDIA's driver names the model: /proc/driver/nvidia/gpus/<pci>/information, "Model: ...".
std::string nvidia_model(const std::string& pci) {
    std::ifstream in("/proc/driver/nvidia/gpus/" + pci + "/information");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("Model:", 0) == 0) {
            auto v = line.substr(6);
            const auto b = v.find_first_not_of(" \t");
            return b == std::string::npos ? std::string() : v.substr(b);
        }
    return {};
}

} // namespace

std::vector<HostGpu> host_gpus(const std::string& sysfs) {
    std::vector<HostGpu> out;
    std::error_code ec;
    const fs::path bus = fs::path(sysfs) / "bus/pci/devices";
    for (const auto& entry : fs::directory_iterator(bus, ec)) {
        const fs::path dir = entry.path();
        const std::string cls = hex_id(first_line(dir / "class"));
        if (cls.size() < 2 || cls.compare(0, 2, "03") != 0)
            continue; // not a display controller
        HostGpu g;
        g.vendor_id = hex_id(first_line(dir / "vendor"));
        const char* vendor = compute_vendor(g.vendor_id);
        if (!vendor)
            continue;
        g.pci = dir.filename().string();
        g.vendor = vendor;
        g.device_id = hex_id(first_line(dir / "device"));
        std::error_code lec;
        const auto driver = fs::read_symlink(dir / "driver", lec);
        if (!lec)
            g.driver = driver.filename().string();
        if (!g.driver.empty())
            g.driver_version = first_line(fs::path(sysfs) / "module" / g.driver / "version");
        if (g.vendor_id == "10de" && sysfs == "/sys")
            g.name = nvidia_model(g.pci);
        if (g.name.empty())
            g.name = g.vendor + " " + g.vendor_id + ":" + g.device_id;
        out.push_back(std::move(g));
    }
    std::sort(out.begin(), out.end(),
              [](const HostGpu& a, const HostGpu& b) { return a.pci < b.pci; });
    return out;
}

} // namespace switchyard
