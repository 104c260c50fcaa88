// SPDX-License-Identifier: MIT
#include "models/resultscontext.h"

#include "models/qtstring.h"

#include <switchyard/hardware/devicekind.h>

#include <QObject>

#include <cmath>
#include <map>

namespace switchyard::ui {

namespace {

QString esc(const QString& s) {
    return s.toHtmlEscaped();
}
QString gib(std::int64_t bytes) {
    return QStringLiteral("%1 GiB").arg(double(bytes) / double(1 << 30), 0, 'f', 1);
}

} // namespace

QString RooflineCeiling::label() const {
    const QString unit =
        kind == QLatin1String("compute") ? QStringLiteral("GFLOP/s") : QStringLiteral("GB/s");
    QString what = kind == QLatin1String("compute")
                       ? QStringLiteral("compute")
                       : (level.isEmpty() ? QStringLiteral("memory") : level);
    QString s = QStringLiteral("%1 %2 %3 %4").arg(device, what).arg(value, 0, 'f', 0).arg(unit);
    if (!measured)
        s += QStringLiteral(" (theoretical)");
    else if (!id.isEmpty())
        s += QStringLiteral(" (%1)").arg(id);
    return s;
}

QString RooflineCeiling::roofLabel() const {
    // Ids read "<level>.<pattern>.<threads>" ("l2.triad.all", "dram.read.1t", "fma.fp32.all",
    // "device.copy", "theoretical.fma.fp32"): the level (or FMA) first, then the rest.
    QStringList parts = id.split(QLatin1Char('.'), Qt::SkipEmptyParts);
    const bool theoretical = !parts.isEmpty() && parts.front() == QLatin1String("theoretical");
    if (theoretical)
        parts.pop_front();
    if (!parts.isEmpty() &&
        (parts.back() == QLatin1String("all") || parts.back() == QLatin1String("1t")))
        parts.pop_back();
    QString head;
    if (isCompute()) {
        head = parts.isEmpty() ? QStringLiteral("compute") : parts.takeFirst().toUpper();
    } else {
        head = level.isEmpty() ? QStringLiteral("memory") : level;
        if (!parts.isEmpty() && parts.front().compare(head, Qt::CaseInsensitive) == 0)
            parts.pop_front();
    }
    parts.prepend(head);
    if (theoretical || !measured)
        parts << QObject::tr("(theoretical)");
    return QStringLiteral("%1 %2 %3")
        .arg(parts.join(QLatin1Char(' ')))
        .arg(value, 0, 'f', value < 10 ? 1 : 0)
        .arg(isCompute() ? QStringLiteral("GFLOP/s") : QStringLiteral("GB/s"));
}

std::vector<RooflineCeiling> ceilingsOf(const RunContext& context) {
    std::vector<RooflineCeiling> out;
    for (const auto& [device, c] : context.ceilings())
        out.push_back({qs(device), qs(c.id), qs(c.kind), qs(c.level), c.value, c.measured,
                       qs(c.method), c.threads, c});
    return out;
}

std::vector<std::pair<QString, QString>> machineFacts(const RunContext& context) {
    std::vector<std::pair<QString, QString>> out;
    auto add = [&](const QString& k, const QString& v) {
        if (!v.trimmed().isEmpty())
            out.emplace_back(k, v);
    };
    // The fingerprint's machine part where the report has one (what makes the machine),
    // else the rest of the context.
    const auto fp = context.fingerprint.facts();
    const auto& cpu = context.cpu;
    const int physical = fp.physical_cores > 0 ? fp.physical_cores : int(cpu.physical_cores);
    const int logical = fp.logical_cpus > 0 ? fp.logical_cpus : int(cpu.logical_cpus);
    QString cores;
    if (physical > 0)
        cores = QObject::tr(" (%1 cores, %2 threads)").arg(physical).arg(logical);
    add(QObject::tr("CPU"), qs(fp.cpu_brand.empty() ? cpu.brand : fp.cpu_brand) + cores);
    add(QObject::tr("microcode"), qs(fp.microcode));
    if (fp.memory_gib > 0)
        add(QObject::tr("memory"), QStringLiteral("%1 GiB").arg(fp.memory_gib));
    else if (context.host.memory_bytes > 0)
        add(QObject::tr("memory"), gib(context.host.memory_bytes));
    if (!fp.isa_best.empty()) {
        QString v = qs(fp.isa_best);
        if (!fp.isa_cap.empty())
            v += QObject::tr(" (capped at %1; detected %2)")
                     .arg(qs(fp.isa_cap), qs(fp.isa_detected));
        add(QObject::tr("ISA"), v);
    } else {
        add(QObject::tr("ISA"), qs(cpu.best_level));
    }
    QStringList gpus;
    if (fp.has_gpus) {
        for (const auto& g : fp.gpus)
            gpus << QStringLiteral("%1 %2 %3").arg(qs(g.id), qs(g.name), qs(g.arch)).simplified();
    } else {
        for (const auto& d : context.devices)
            if (device_kind(d.kind) != DeviceKind::Cpu && d.id != "cpu")
                gpus << QStringLiteral("%1 %2").arg(qs(d.id), qs(d.name)).simplified();
    }
    add(QObject::tr("GPUs"),
        gpus.isEmpty() ? QObject::tr("none") : gpus.join(QStringLiteral(", ")));
    if (fp.has_openblas)
        add(QObject::tr("OpenBLAS core"),
            fp.openblas_core.empty()
                ? QObject::tr("none")
                : QObject::tr("%1, %2 threads").arg(qs(fp.openblas_core)).arg(fp.openblas_threads));
    else
        add(QObject::tr("OpenBLAS core"), qs(context.openblas.corename));
    const auto& sw = context.switchyard;
    QStringList build;
    if (!sw.git_hash.empty())
        build << QStringLiteral("git ") + qs(sw.git_hash);
    for (const auto* k : {&sw.build_type, &sw.compiler})
        if (!k->empty())
            build << qs(*k);
    add(QObject::tr("Switchyard"),
        build.isEmpty()
            ? qs(sw.version)
            : QStringLiteral("%1 (%2)").arg(qs(sw.version), build.join(QStringLiteral(", "))));
    add(QObject::tr("OS"), qs(fp.os.empty() ? context.host.os : fp.os));
    add(QObject::tr("date"), qs(context.date));
    add(QObject::tr("machine id"), qs(context.fingerprint.machine_id));
    return out;
}

QString machineName(const RunContext& context) {
    const QString host = qs(context.host.hostname);
    const QString cpu = qs(context.cpu.brand);
    if (host.isEmpty() && cpu.isEmpty())
        return QObject::tr("unknown machine");
    if (cpu.isEmpty())
        return host;
    return host.isEmpty() ? cpu : QStringLiteral("%1 (%2)").arg(host, cpu);
}

QString contextHtml(const RunContext& context) {
    if (context.date.empty() && context.host.hostname.empty() && context.cpu.brand.empty() &&
        context.devices.empty())
        return QObject::tr("<p>The report has no context.</p>");
    QString html;
    auto row = [&](const QString& k, const QString& v) {
        if (!v.isEmpty())
            html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(esc(k), esc(v));
    };
    html += QStringLiteral("<h3>%1</h3><table cellspacing='2'>").arg(esc(machineName(context)));
    row(QObject::tr("date"), qs(context.date));
    const auto& s = context.switchyard;
    if (!s.version.empty())
        row(QObject::tr("Switchyard"),
            QStringLiteral("%1 (git %2, %3, %4)")
                .arg(qs(s.version), qs(s.git_hash), qs(s.build_type), qs(s.compiler)));
    const auto& h = context.host;
    row(QObject::tr("OS"), QStringLiteral("%1 %2").arg(qs(h.os), qs(h.distro)).trimmed());
    row(QObject::tr("governor"), qs(h.governor));
    if (h.memory_bytes > 0)
        row(QObject::tr("memory"), gib(h.memory_bytes));
    const auto& c = context.cpu;
    row(QObject::tr("CPU"), qs(c.brand));
    row(QObject::tr("microarchitecture"), qs(c.microarchitecture));
    if (c.physical_cores > 0)
        row(QObject::tr("cores"),
            QStringLiteral("%1 physical, %2 logical").arg(c.physical_cores).arg(c.logical_cpus));
    row(QObject::tr("ISA level"),
        !c.isa_cap.empty() ? QObject::tr("%1 (capped at %2)").arg(qs(c.best_level), qs(c.isa_cap))
                           : qs(c.best_level));
    QStringList caches;
    for (const auto& k : c.caches)
        caches << QStringLiteral("L%1 %2 %3 KiB")
                      .arg(k.level)
                      .arg(qs(k.type))
                      .arg(k.size_bytes / 1024);
    row(QObject::tr("caches"), caches.join(QStringLiteral(", ")));
    row(QObject::tr("caches assumed"), qs(c.cache_note));
    const auto& k = context.clock;
    row(QObject::tr("clock"), k.chain_ghz > 0
                                  ? QObject::tr("%1 GHz when the run started; per row: %2")
                                        .arg(k.chain_ghz, 0, 'f', 2)
                                        .arg(qs(k.method))
                                  : qs(k.method));
    html += QStringLiteral("</table>");
    const auto ceilings = ceilingsOf(context);
    for (const auto& d : context.devices) {
        html += QStringLiteral("<h4>%1 — %2</h4><table cellspacing='2'>")
                    .arg(esc(qs(d.id)), esc(qs(d.name)));
        row(QObject::tr("arch"), qs(d.arch));
        if (d.peak_bandwidth_gbs > 0)
            row(QObject::tr("peak bandwidth"), QStringLiteral("%1 GB/s (%2)")
                                                   .arg(d.peak_bandwidth_gbs, 0, 'f', 1)
                                                   .arg(qs(d.peak_bandwidth_source)));
        if (d.peak_gflops > 0)
            row(QObject::tr("peak compute"), QStringLiteral("%1 GFLOP/s (%2)")
                                                 .arg(d.peak_gflops, 0, 'f', 1)
                                                 .arg(qs(d.peak_gflops_source)));
        html += QStringLiteral("</table>");
        const QString id = qs(d.id);
        if (std::none_of(ceilings.begin(), ceilings.end(),
                         [&](const RooflineCeiling& c) { return c.device == id; }))
            continue;
        html += QObject::tr("<table border='1' cellspacing='0' cellpadding='3'><tr><th>"
                            "ceiling</th><th>level</th><th>value</th><th>threads</th>"
                            "<th>how</th></tr>");
        for (const auto& c : ceilings) {
            if (c.device != id)
                continue;
            html +=
                QStringLiteral("<tr><td>%1</td><td>%2</td><td align='right'>%3 %4</td>"
                               "<td>%5</td><td>%6</td></tr>")
                    .arg(esc(c.id),
                         esc(c.kind == QLatin1String("compute") ? QObject::tr("compute") : c.level))
                    .arg(c.value, 0, 'f', 1)
                    .arg(c.kind == QLatin1String("compute") ? QStringLiteral("GFLOP/s")
                                                            : QStringLiteral("GB/s"))
                    .arg(c.threads > 0 ? QString::number(c.threads) : QObject::tr("all"))
                    .arg(esc(c.method.isEmpty() ? (c.measured ? QObject::tr("measured")
                                                              : QObject::tr("theoretical"))
                                                : c.method));
        }
        html += QStringLiteral("</table>");
    }
    for (const auto& w : context.read_warnings)
        html += QStringLiteral("<p><i>%1</i></p>").arg(esc(qs(w)));
    html += QObject::tr("<h4>Settings</h4><table cellspacing='2'>");
    for (const auto& [key, value] : context.settings.entries())
        row(qs(key), qs(value));
    html += QStringLiteral("</table>");
    if (!context.warnings.empty()) {
        html += QObject::tr("<h4>Warnings</h4><ul>");
        for (const auto& w : context.warnings)
            html += QStringLiteral("<li>%1</li>").arg(esc(qs(w)));
        html += QStringLiteral("</ul>");
    }
    return html;
}

} // namespace switchyard::ui
