// SPDX-License-Identifier: MIT
#include "models/hardwaremodel.h"

#include "models/qtstring.h"
#include "models/tone.h"

#include <QFont>
#include <QLocale>

#include <set>

namespace switchyard::ui {
namespace {
QString bytes(std::int64_t n) {
    return QLocale::system().formattedDataSize(n, 1, QLocale::DataSizeTraditionalFormat);
}
} // namespace

HardwareModel::HardwareModel(QObject* parent) : TreeModel({tr("Property"), tr("Value")}, parent) {}

void HardwareModel::setResults(const DoctorReport& report) {
    beginBuild();
    QFont bold;
    bold.setBold(true);
    auto section = [&](const QString& title, const QString& value = {}) {
        const int id = addNode(kRoot, {title, value});
        setCellRole(id, PropertyColumn, Qt::FontRole, bold);
        return id;
    };
    const auto& cpu = report.system.cpu;
    const int c = section(tr("CPU"), qs(cpu.brand));
    addNode(c, {tr("Architecture"), qs(cpu.architecture)});
    addNode(c, {tr("Vendor"), qs(cpu.vendor)});
    addNode(c, {tr("Microarchitecture"), qs(cpu.microarchitecture)});
    addNode(c, {tr("Family / model / stepping"),
                QStringLiteral("%1 / %2 / %3").arg(cpu.family).arg(cpu.model).arg(cpu.stepping)});
    addNode(c, {tr("Cores"), tr("%1 physical, %2 logical (in this process's affinity mask)")
                                 .arg(cpu.physical_cores)
                                 .arg(cpu.logical_cpus)});
    const int caches =
        addNode(c, {tr("Caches"), cpu.cache_source.empty()
                                      ? qs(cpu.caches_summary()) // "none reported (...)"
                                      : tr("%n level(s), from %1", nullptr, int(cpu.caches.size()))
                                            .arg(qs(cpu.cache_source))});
    for (const auto& l : cpu.caches)
        addNode(caches,
                {QStringLiteral("L%1 %2").arg(l.level).arg(qs(l.type)),
                 l.ways > 0 ? tr("%1, %2-byte lines, %3-way")
                                  .arg(bytes(l.size_bytes))
                                  .arg(l.line_bytes)
                                  .arg(l.ways)
                            : tr("%1, %2-byte lines").arg(bytes(l.size_bytes)).arg(l.line_bytes)});
    if (!cpu.cache_note.empty()) // a sentence: whole in the tooltip where the column elides it
        setCellRole(addNode(caches, {tr("Assumed"), qs(cpu.cache_note)}), 1, Qt::ToolTipRole,
                    qs(cpu.cache_note));
    QStringList levels;
    for (const auto& l : cpu.isa_levels)
        levels << qs(l);
    addNode(c, {tr("ISA levels"), levels.join(QStringLiteral(", "))});
    addNode(c, {tr("Best level"), qs(cpu.best_level)});
    if (!cpu.isa_cap.empty())
        addNode(c, {tr("ISA cap"),
                    tr("%1 (SWITCHYARD_MAX_ISA or --max-isa); the CPU runs %2")
                        .arg(qs(cpu.isa_cap), qs(cpu.detected_isa_levels.empty()
                                                     ? std::string("generic")
                                                     : cpu.detected_isa_levels.back()))});
    QStringList features;
    for (const auto& f : cpu.features)
        features << qs(f);
    const int feat =
        addNode(c, {tr("Features"), tr("%n feature(s)", nullptr, int(features.size()))});
    for (int i = 0; i < features.size(); i += 12)
        addNode(feat, {QString(), features.mid(i, 12).join(QLatin1Char(' '))});

    const auto& host = report.system.host;
    const int h = section(tr("Host"), qs(host.hostname));
    addNode(h, {tr("OS"), qs(host.os)});
    addNode(h, {tr("Distribution"), qs(host.distro)});
    addNode(h, {tr("Memory"), bytes(host.memory_bytes)});
    addNode(h,
            {tr("CPU governor"), host.governor.empty() ? tr("(no cpufreq)") : qs(host.governor)});

    std::set<std::string> kinds;
    const int d = section(tr("Devices"), tr("%n device(s)", nullptr, int(report.devices.size())));
    for (const auto& dev : report.devices) {
        kinds.insert(dev.kind);
        const int n = addNode(d, {qs(dev.id), qs(dev.name)});
        addNode(n, {tr("Kind / arch"), QStringLiteral("%1 / %2").arg(qs(dev.kind), qs(dev.arch))});
        addNode(n, {tr("Peak bandwidth"), dev.peak_bandwidth_gbs > 0
                                              ? tr("%1 GB/s (%2)")
                                                    .arg(dev.peak_bandwidth_gbs, 0, 'f', 1)
                                                    .arg(qs(dev.peak_bandwidth_source))
                                              : tr("not measured yet")});
        addNode(n, {tr("Peak fp32"), dev.peak_gflops > 0 ? tr("%1 GFLOP/s (%2)")
                                                               .arg(dev.peak_gflops, 0, 'f', 1)
                                                               .arg(qs(dev.peak_gflops_source))
                                                         : tr("not measured yet")});
        addNode(n,
                {tr("Device timers"), dev.has_device_timer ? tr("yes") : tr("no (host timing)")});
        for (const auto& [key, value] : device_property_entries(dev))
            addNode(n, {qs(key), qs(value)});
    }
    // Why a device class is absent: what the doctor found of its driver/runtime.
    for (const char* kind : {"cuda", "opencl", "vulkan"}) {
        if (kinds.count(kind))
            continue;
        QStringList found;
        for (const auto& r : report.runtimes)
            if (std::string(to_string(r.kind)).find(kind) != std::string::npos ||
                r.name.find(kind) != std::string::npos)
                found << QStringLiteral("%1: %2").arg(qs(r.name), qs(r.detail));
        QString why =
            found.isEmpty()
                ? tr("no %1 backend loaded a device provider here").arg(QLatin1String(kind))
                : found.join(QStringLiteral("; "));
        // A backend that is installed but not opened yet has not listed its devices.
        for (const auto& b : report.backends)
            if (b.name == kind && b.state != BackendState::Loaded)
                why = b.state == BackendState::Discovered
                          ? tr("the %1 backend is installed but not loaded yet, so it has not "
                               "listed devices; runtime: %2")
                                .arg(QLatin1String(kind), why)
                          : tr("the %1 backend is %2 (%3); runtime: %4")
                                .arg(QLatin1String(kind), qs(to_string(b.state)),
                                     qs(to_string(b.cause)), why);
        addNode(d, {QLatin1String(kind), tr("no device — %1").arg(why)},
                {{Qt::ForegroundRole, toneColor(Tone::Muted)}, {Qt::ToolTipRole, why}});
    }
    const int rt = section(tr("Drivers and runtimes"));
    for (const auto& r : report.runtimes)
        addNode(rt, {QStringLiteral("%1 (%2)").arg(qs(r.name), qs(std::string(to_string(r.kind)))),
                     qs(r.detail)});
    endBuild();
}

} // namespace switchyard::ui
