// SPDX-License-Identifier: MIT
#include "models/resultscontext.h"

#include "models/qtstring.h"

#include <QObject>

#include <cmath>
#include <map>

namespace switchyard::ui {

namespace {

QString str(const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? qs(j[key].get<std::string>())
                                                                  : QString();
}
double num(const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}
QString esc(const QString& s) {
    return s.toHtmlEscaped();
}
QString scalar(const nlohmann::json& v) {
    if (v.is_string())
        return qs(v.get<std::string>());
    return qs(v.dump());
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

std::vector<RooflineCeiling> ceilingsOf(const ReportContext& context) {
    std::vector<RooflineCeiling> out;
    for (const auto& [device, c] : context.ceilings())
        out.push_back({qs(device), qs(c.id), qs(c.kind), qs(c.level), c.value, c.measured,
                       qs(c.method), c.threads, c});
    return out;
}

std::vector<RooflineCeiling> ceilingsOf(const nlohmann::json& context) {
    return ceilingsOf(ReportContext::from_json(context));
}

std::vector<std::pair<QString, QString>> machineFacts(const nlohmann::json& context) {
    std::vector<std::pair<QString, QString>> out;
    auto add = [&](const QString& k, const QString& v) {
        if (!v.trimmed().isEmpty())
            out.emplace_back(k, v);
    };
    static const nlohmann::json none = nlohmann::json::object();
    auto obj = [](const nlohmann::json& j, const char* key) -> const nlohmann::json& {
        return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : none;
    };
    const auto& fp = obj(context, "fingerprint");
    const auto& machine = obj(fp, "machine");
    const auto& software = obj(fp, "software");
    const auto& cpu = obj(machine, "cpu").empty() ? obj(context, "cpu") : obj(machine, "cpu");
    QString cores;
    if (num(cpu, "physical_cores") > 0)
        cores = QObject::tr(" (%1 cores, %2 threads)")
                    .arg(num(cpu, "physical_cores"))
                    .arg(num(cpu, "logical_cpus"));
    add(QObject::tr("CPU"), str(cpu, "brand") + cores);
    if (const auto& c = obj(machine, "cpu"); !c.empty() && c.contains("microcode"))
        add(QObject::tr("microcode"), scalar(c["microcode"]));
    if (num(machine, "memory_gib") > 0)
        add(QObject::tr("memory"), QStringLiteral("%1 GiB").arg(num(machine, "memory_gib")));
    else if (num(obj(context, "host"), "memory_bytes") > 0)
        add(QObject::tr("memory"),
            QStringLiteral("%1 GiB").arg(num(obj(context, "host"), "memory_bytes") / (1 << 30), 0,
                                         'f', 1));
    if (const auto& isa = obj(machine, "isa"); !isa.empty()) {
        QString v = str(isa, "best");
        if (!str(isa, "cap").isEmpty())
            v += QObject::tr(" (capped at %1; detected %2)")
                     .arg(str(isa, "cap"), str(isa, "detected"));
        add(QObject::tr("ISA"), v);
    } else {
        add(QObject::tr("ISA"), str(obj(context, "cpu"), "best_level"));
    }
    QStringList gpus;
    if (machine.contains("gpus") && machine["gpus"].is_array()) {
        for (const auto& g : machine["gpus"])
            gpus << QStringLiteral("%1 %2 %3")
                        .arg(str(g, "id"), str(g, "name"), str(g, "arch"))
                        .simplified();
    } else {
        for (const auto& d : ReportContext::from_json(context).devices)
            if (d.kind != "cpu" && d.id != "cpu")
                gpus << QStringLiteral("%1 %2").arg(qs(d.id), qs(d.name)).simplified();
    }
    add(QObject::tr("GPUs"),
        gpus.isEmpty() ? QObject::tr("none") : gpus.join(QStringLiteral(", ")));
    if (const auto& b = obj(machine, "openblas"); !b.empty())
        add(QObject::tr("OpenBLAS core"),
            str(b, "core").isEmpty()
                ? QObject::tr("none")
                : QObject::tr("%1, %2 threads").arg(str(b, "core")).arg(num(b, "threads")));
    else
        add(QObject::tr("OpenBLAS core"), str(obj(context, "openblas"), "corename"));
    const auto& sw = obj(software, "switchyard").empty() ? obj(context, "switchyard")
                                                         : obj(software, "switchyard");
    QStringList build;
    if (!str(sw, "git_hash").isEmpty())
        build << QStringLiteral("git ") + str(sw, "git_hash");
    for (const char* k : {"build_type", "compiler"})
        if (!str(sw, k).isEmpty())
            build << str(sw, k);
    add(QObject::tr("Switchyard"),
        build.isEmpty()
            ? str(sw, "version")
            : QStringLiteral("%1 (%2)").arg(str(sw, "version"), build.join(QStringLiteral(", "))));
    add(QObject::tr("OS"),
        !str(software, "os").isEmpty() ? str(software, "os") : str(obj(context, "host"), "os"));
    add(QObject::tr("date"), str(context, "date"));
    add(QObject::tr("machine id"), str(fp, "machine_id"));
    return out;
}

QString machineName(const nlohmann::json& context) {
    const QString host = qs(ReportContext::from_json(context).hostname);
    const QString cpu = context.contains("cpu") ? str(context["cpu"], "brand") : QString();
    if (host.isEmpty() && cpu.isEmpty())
        return QObject::tr("unknown machine");
    if (cpu.isEmpty())
        return host;
    return host.isEmpty() ? cpu : QStringLiteral("%1 (%2)").arg(host, cpu);
}

QString contextHtml(const nlohmann::json& context) {
    if (!context.is_object() || context.empty())
        return QObject::tr("<p>The report has no context.</p>");
    QString html;
    auto row = [&](const QString& k, const QString& v) {
        if (!v.isEmpty())
            html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(esc(k), esc(v));
    };
    html += QStringLiteral("<h3>%1</h3><table cellspacing='2'>").arg(esc(machineName(context)));
    row(QObject::tr("date"), str(context, "date"));
    if (context.contains("switchyard")) {
        const auto& s = context["switchyard"];
        row(QObject::tr("Switchyard"), QStringLiteral("%1 (git %2, %3, %4)")
                                           .arg(str(s, "version"), str(s, "git_hash"),
                                                str(s, "build_type"), str(s, "compiler")));
    }
    if (context.contains("host")) {
        const auto& h = context["host"];
        row(QObject::tr("OS"),
            QStringLiteral("%1 %2").arg(str(h, "os"), str(h, "distro")).trimmed());
        row(QObject::tr("governor"), str(h, "governor"));
        if (num(h, "memory_bytes") > 0)
            row(QObject::tr("memory"),
                QStringLiteral("%1 GiB").arg(num(h, "memory_bytes") / (1 << 30), 0, 'f', 1));
    }
    if (context.contains("cpu")) {
        const auto& c = context["cpu"];
        row(QObject::tr("CPU"), str(c, "brand"));
        row(QObject::tr("microarchitecture"), str(c, "microarchitecture"));
        if (num(c, "physical_cores") > 0)
            row(QObject::tr("cores"), QStringLiteral("%1 physical, %2 logical")
                                          .arg(num(c, "physical_cores"))
                                          .arg(num(c, "logical_cpus")));
        row(QObject::tr("ISA level"),
            c.contains("isa_cap") && c["isa_cap"].is_string()
                ? QObject::tr("%1 (capped at %2)").arg(str(c, "best_level"), str(c, "isa_cap"))
                : str(c, "best_level"));
        if (c.contains("caches") && c["caches"].is_array()) {
            QStringList caches;
            for (const auto& k : c["caches"])
                caches << QStringLiteral("L%1 %2 %3 KiB")
                              .arg(num(k, "level"))
                              .arg(str(k, "type"))
                              .arg(num(k, "size_bytes") / 1024);
            row(QObject::tr("caches"), caches.join(QStringLiteral(", ")));
        }
        if (!str(c, "cache_note").isEmpty())
            row(QObject::tr("caches assumed"), str(c, "cache_note"));
    }
    if (context.contains("clock") && context["clock"].is_object()) {
        const auto& k = context["clock"];
        row(QObject::tr("clock"), num(k, "chain_ghz") > 0
                                      ? QObject::tr("%1 GHz when the run started; per row: %2")
                                            .arg(num(k, "chain_ghz"), 0, 'f', 2)
                                            .arg(str(k, "method"))
                                      : str(k, "method"));
    }
    html += QStringLiteral("</table>");
    const ReportContext typed = ReportContext::from_json(context);
    const auto ceilings = ceilingsOf(typed);
    for (const auto& d : typed.devices) {
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
    for (const auto& w : typed.warnings)
        html += QStringLiteral("<p><i>%1</i></p>").arg(esc(qs(w)));
    if (context.contains("settings") && context["settings"].is_object()) {
        html += QObject::tr("<h4>Settings</h4><table cellspacing='2'>");
        for (const auto& [k, v] : context["settings"].items())
            row(qs(k), scalar(v));
        html += QStringLiteral("</table>");
    }
    if (context.contains("warnings") && context["warnings"].is_array() &&
        !context["warnings"].empty()) {
        html += QObject::tr("<h4>Warnings</h4><ul>");
        for (const auto& w : context["warnings"])
            html += QStringLiteral("<li>%1</li>").arg(esc(scalar(w)));
        html += QStringLiteral("</ul>");
    }
    return html;
}

} // namespace switchyard::ui
