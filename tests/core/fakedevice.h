// SPDX-License-Identifier: MIT
// A device and its provider the way a GPU backend would plug in, for tests.
#pragma once

#include <switchyard/hardware/deviceregistry.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace switchyard::test {

// Its own "memory", a device timer, a peak from a spec sheet, and a clock per sample. A
// throttling one runs every fourth sample at a third of its clock, and that sample takes
// twice as long.
// A device whose buffers are host memory.
class HostMemoryDevice : public Device {
public:
    void* allocate(std::size_t bytes) override { return ::operator new(bytes); }
    void release(void* p) noexcept override { ::operator delete(p); }
    void upload(void* d, const void* s, std::size_t n) override { std::memcpy(d, s, n); }
    void download(void* d, const void* s, std::size_t n) override { std::memcpy(d, s, n); }
};

class FakeDevice final : public HostMemoryDevice, public SampleClock {
public:
    explicit FakeDevice(int n, bool throttles = false) : m_throttles(throttles) {
        m_info.id = "fake:" + std::to_string(n);
        m_info.kind = "fake";
        m_info.name = "Fake accelerator";
        m_info.arch = "fk_1";
        m_info.peak_bandwidth_gbs = 1000;
        m_info.peak_bandwidth_source = "spec";
        m_info.has_device_timer = true;
        m_info.properties = {{"memory_bytes", 1 << 30}};
    }
    const DeviceInfo& info() const override { return m_info; }
    double time_launches(const std::function<void()>& launch, int count) override {
        for (int i = 0; i < count; ++i)
            launch();
        const bool slow = m_throttles && ++m_samples % 4 == 0;
        m_ghz = slow ? 1.0 : 3.0;
        return (slow ? 2e-3 : 1e-3) * count; // "events" say 1 ms each (2 ms throttled)
    }
    double last_sample_clock_ghz() const noexcept override { return m_ghz; }
    std::string sample_clock_method() const override { return "fake clock"; }

private:
    DeviceInfo m_info;
    bool m_throttles;
    int m_samples = 0;
    double m_ghz = 0;
};

// A device with no clock of its own (no SampleClock), of an OpenCL-like `device_type`
// ("CPU": it runs on the host's cores; "GPU": nothing can read its clock).
class ClocklessDevice final : public HostMemoryDevice {
public:
    ClocklessDevice(std::string kind, std::string type, std::string arch = "generic",
                    Value properties = Value::object()) {
        m_info.id = kind + ":0";
        m_info.kind = std::move(kind);
        m_info.name = "Clockless " + type + " device";
        m_info.arch = std::move(arch);
        m_info.has_device_timer = true;
        m_info.properties = std::move(properties);
        m_info.properties["device_type"] = std::move(type);
    }
    const DeviceInfo& info() const override { return m_info; }
    double time_launches(const std::function<void()>& launch, int count) override {
        for (int i = 0; i < count; ++i)
            launch();
        return 1e-3 * count;
    }

private:
    DeviceInfo m_info;
};

class ClocklessProvider final : public DeviceProvider {
public:
    ClocklessProvider(std::string kind, std::string type, std::string arch = "generic",
                      Value properties = Value::object())
        : m_device(std::make_shared<ClocklessDevice>(kind, std::move(type), std::move(arch),
                                                     std::move(properties))),
          m_kind(std::move(kind)) {}
    std::string kind() const override { return m_kind; }
    std::vector<std::shared_ptr<Device>> enumerate() override { return {m_device}; }

private:
    std::shared_ptr<Device> m_device;
    std::string m_kind;
};

// Lists fake:0 and fake:1 (throttling ones when asked).
class FakeProvider final : public DeviceProvider {
public:
    explicit FakeProvider(bool throttles = false) : m_throttles(throttles) {}
    std::string kind() const override { return "fake"; }
    std::vector<std::shared_ptr<Device>> enumerate() override {
        if (m_devices.empty())
            m_devices = {std::make_shared<FakeDevice>(0, m_throttles),
                         std::make_shared<FakeDevice>(1, m_throttles)};
        return m_devices;
    }

private:
    bool m_throttles;
    std::vector<std::shared_ptr<Device>> m_devices;
};

// A runtime that cannot start: listing its devices throws `message` (the CUDA provider
// on an H200 host, in a PID namespace: "cudaErrorOperatingSystem: ...").
class BrokenProvider final : public DeviceProvider {
public:
    explicit BrokenProvider(std::string message, std::string kind = "broken")
        : m_message(std::move(message)), m_kind(std::move(kind)) {}
    std::string kind() const override { return m_kind; }
    std::vector<std::shared_ptr<Device>> enumerate() override {
        throw std::runtime_error(m_message);
    }

private:
    std::string m_message, m_kind;
};

// A device whose prepare() "probes" (counted) and finds a bandwidth ceiling, and keeps its
// figures between runs by an identity that names its driver (PreparedState).
class ProbingDevice final : public HostMemoryDevice, public PreparedState {
public:
    explicit ProbingDevice(std::string driver) : m_driver(std::move(driver)) {
        m_info.id = "probing:0";
        m_info.kind = "probing";
        m_info.name = "Probing accelerator";
        m_info.arch = "generic";
    }
    const DeviceInfo& info() const override { return m_info; }
    void prepare() override {
        if (m_prepared)
            return;
        m_prepared = true;
        ++m_probes;
        m_info.peak_bandwidth_gbs = 123.5;
        m_info.peak_bandwidth_source = "measured: copy probe";
        Ceiling c;
        c.id = "device.copy";
        c.kind = "bandwidth";
        c.level = "device";
        c.value = 123.5;
        c.method = "copy probe";
        m_info.ceilings = {c};
    }
    std::string prepared_identity() const override { return "probing | " + m_driver; }
    void adopt_prepared(const DeviceInfo& measured) override {
        if (m_prepared)
            return;
        m_prepared = true;
        m_info.peak_bandwidth_gbs = measured.peak_bandwidth_gbs;
        m_info.peak_bandwidth_source = measured.peak_bandwidth_source;
        m_info.ceilings = measured.ceilings;
    }
    int probes() const { return m_probes; }

private:
    DeviceInfo m_info;
    std::string m_driver;
    bool m_prepared = false;
    int m_probes = 0;
};

// A provider of one given device.
class SingleDeviceProvider final : public DeviceProvider {
public:
    explicit SingleDeviceProvider(std::shared_ptr<Device> device) : m_device(std::move(device)) {}
    std::string kind() const override { return m_device->info().kind; }
    std::vector<std::shared_ptr<Device>> enumerate() override { return {m_device}; }

private:
    std::shared_ptr<Device> m_device;
};

} // namespace switchyard::test
