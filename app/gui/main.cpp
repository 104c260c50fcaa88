// SPDX-License-Identifier: MIT
// switchyard: the GUI. Parses the command line and wires the window to the process-wide
// registries; --screenshot DIR saves one PNG per panel once everything is shown, then quits.
// --help and --version are answered before QApplication exists, so they need no display.
#include "controllers/fleetloader.h"
#include "mainwindow.h"
#include "versiontext.h"

#include <switchyard/hardware/hardware.h>
#include <switchyard/hardware/isa.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/profiling/profiler.h>
#include <switchyard/registry/fallback.h>
#include <switchyard/registry/suggest.h>
#include <switchyard/runtime/runtime.h>
#include <switchyard/sdk/version.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QPalette>
#include <QSet>
#include <QSettings>
#include <QStringList>
#include <QStyle>
#include <QStyleFactory>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// A dark palette on the Fusion style (which honours every palette role), for
// `--palette dark` where the platform gives no dark theme (Xvfb, offscreen).
QPalette darkPalette() {
    QPalette p;
    const QColor window(0x2b, 0x2b, 0x2b), base(0x1e, 0x1e, 0x1e), text(0xe6, 0xe6, 0xe6);
    const QColor disabled(0x80, 0x80, 0x80), highlight(0x2f, 0x65, 0xca);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x26));
    p.setColor(QPalette::ToolTipBase, QColor(0x3a, 0x3a, 0x3a));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::white);
    p.setColor(QPalette::Light, QColor(0x4a, 0x4a, 0x4a));
    p.setColor(QPalette::Midlight, QColor(0x3e, 0x3e, 0x3e));
    p.setColor(QPalette::Mid, QColor(0x25, 0x25, 0x25));
    p.setColor(QPalette::Dark, QColor(0x18, 0x18, 0x18));
    p.setColor(QPalette::Shadow, Qt::black);
    p.setColor(QPalette::Highlight, highlight);
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x6a, 0xa8, 0xff));
    p.setColor(QPalette::LinkVisited, QColor(0xb0, 0x8c, 0xff));
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    return p;
}

// Whether argv asks for --help or --version: those are answered without a display.
bool asksHelpOrVersion(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        for (const char* flag : {"-h", "--help", "-?", "--help-all", "-v", "--version"})
            if (std::strcmp(argv[i], flag) == 0)
                return true;
    return false;
}

} // namespace

int main(int argc, char** argv) {
    QCoreApplication::setOrganizationName(QStringLiteral("Switchyard"));
    QCoreApplication::setApplicationName(QStringLiteral("Switchyard"));
    QCoreApplication::setApplicationVersion(QString::fromUtf8(switchyard::core_version().data()));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Switchyard: compute backend explorer"));
    const QCommandLineOption help = parser.addHelpOption();
    const QCommandLineOption version(
        {QStringLiteral("v"), QStringLiteral("version")},
        QStringLiteral(
            "Displays the version, git hash and build type, as switchyard-cli --version."));
    parser.addOption(version);
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QStringLiteral("Save one PNG per panel into DIR and quit."),
                                        QStringLiteral("DIR"));
    const QCommandLineOption prefix(QStringLiteral("screenshot-prefix"),
                                    QStringLiteral("File name prefix of the screenshots."),
                                    QStringLiteral("PREFIX"), QStringLiteral("switchyard"));
    const QCommandLineOption select(QStringLiteral("select"),
                                    QStringLiteral("Select backend NAME."), QStringLiteral("NAME"));
    const QCommandLineOption target(QStringLiteral("target"),
                                    QStringLiteral("Kernel matrix target (cuda:sm_90, cpu, ...)."),
                                    QStringLiteral("TARGET"));
    const QCommandLineOption op(QStringLiteral("op"),
                                QStringLiteral("Highlight OP's fallback chain."),
                                QStringLiteral("OP"));
    const QCommandLineOption palette(
        QStringLiteral("palette"),
        QStringLiteral("Colour scheme: system (default), light or dark (Fusion style)."),
        QStringLiteral("SCHEME"), QStringLiteral("system"));
    // The profiler: run a profile, open a report, compare reports (with --screenshot, the
    // profiler's and the comparison's pictures are taken once they are shown).
    const QCommandLineOption profile(QStringLiteral("profile"),
                                     QStringLiteral("Profile OPS (comma-separated) at start."),
                                     QStringLiteral("OPS"));
    const QCommandLineOption profileDevices(
        QStringLiteral("profile-devices"),
        QStringLiteral("Devices for --profile (comma-separated)."), QStringLiteral("DEVICES"));
    const QCommandLineOption allVariants(QStringLiteral("all-variants"),
                                         QStringLiteral("--profile runs every variant."));
    const QCommandLineOption sizes(QStringLiteral("sizes"),
                                   QStringLiteral("Sizes for --profile (comma-separated)."),
                                   QStringLiteral("SIZES"));
    const QCommandLineOption budget(QStringLiteral("budget"),
                                    QStringLiteral("Seconds of sampling per row for --profile."),
                                    QStringLiteral("SECONDS"));
    const QCommandLineOption profilerShots(
        QStringLiteral("profiler-screenshots"),
        QStringLiteral("With --screenshot: take the profiler's pictures even without --profile, "
                       "--open-report or --compare (its empty state before a run)."));
    const QCommandLineOption openReport(QStringLiteral("open-report"),
                                        QStringLiteral("Open the report FILE in the profiler."),
                                        QStringLiteral("FILE"));
    const QCommandLineOption compare(QStringLiteral("compare"),
                                     QStringLiteral("Compare REPORTS (comma-separated paths)."),
                                     QStringLiteral("REPORTS"));
    const QCommandLineOption compareFolder(
        QStringLiteral("compare-folder"),
        QStringLiteral("Open the fleet folder DIR (its report*.json files) in the Fleet tab."),
        QStringLiteral("DIR"));
    const QCommandLineOption maxIsa(
        QStringLiteral("max-isa"),
        QStringLiteral("Cap the detected CPU ISA level (generic, x86-64-v2, x86-64-v3, x86-64-v4): "
                       "see what a smaller machine would pick. Same as SWITCHYARD_MAX_ISA."),
        QStringLiteral("LEVEL"));
    const QCommandLineOption pinCpu(
        QStringLiteral("pin-cpu"),
        QStringLiteral(
            "The CPU 1-thread probes and rows run on (a number, or \"off\" to leave them "
            "unpinned); default: the CPU the profile is on when it first measures. "
            "Same as SWITCHYARD_PIN_CPU."),
        QStringLiteral("CPU|off"));
    parser.addOptions({screenshot, prefix, select, target, op, profile, profileDevices, allVariants,
                       sizes, budget, profilerShots, openReport, compare, compareFolder, palette,
                       maxIsa, pinCpu});
    const auto answerHelpOrVersion = [&] {
        if (parser.isSet(help) || parser.isSet(QStringLiteral("help-all")))
            parser.showHelp(0);
        if (parser.isSet(version)) {
            std::printf("%s\n", switchyard::app::version_text("switchyard").c_str());
            std::exit(0);
        }
    };
    if (asksHelpOrVersion(argc, argv)) {
        // No QApplication yet: it would connect to the display first.
        const QCoreApplication core(argc, argv);
        parser.parse(QCoreApplication::arguments());
        answerHelpOrVersion();
        // A "--help" that was an option's value: the GUI starts as usual.
    }

    // Without a display Qt's xcb plugin aborts ("could not connect to display"): say what to
    // do instead. A platform named in QT_QPA_PLATFORM or -platform (offscreen, eglfs) is its own.
    const auto unset = [](const char* name) {
        const char* value = std::getenv(name);
        return !value || !*value;
    };
    const auto platformArg = [&] {
        for (int i = 1; i < argc; ++i)
            if (std::strcmp(argv[i], "-platform") == 0 || std::strcmp(argv[i], "--platform") == 0)
                return true;
        return false;
    };
    if (unset("DISPLAY") && unset("WAYLAND_DISPLAY") && unset("QT_QPA_PLATFORM") &&
        !platformArg()) {
        std::fprintf(
            stderr, "switchyard: no display (neither DISPLAY nor WAYLAND_DISPLAY is set).\n"
                    "  Start it from a desktop session, or in a virtual display: xvfb-run -a "
                    "switchyard ...\n"
                    "  Headless, switchyard-cli gives the same answers (switchyard-cli --help).\n");
        return 1;
    }
    QApplication app(argc, argv);
    QApplication::setDesktopFileName(QStringLiteral("switchyard"));
    parser.process(app);
    answerHelpOrVersion();
    // Before anything detects the CPU: the cap is read once, and profile workers inherit it.
    if (parser.isSet(maxIsa))
        ::setenv("SWITCHYARD_MAX_ISA", qPrintable(parser.value(maxIsa)), 1);
    else if (!std::getenv("SWITCHYARD_MAX_ISA"))
        if (const QString saved =
                QSettings().value(QLatin1String(switchyard::ui::kIsaCapKey)).toString();
            !saved.isEmpty())
            ::setenv("SWITCHYARD_MAX_ISA", qPrintable(saved), 1);
    if (const auto& cap = switchyard::cpu_isa_cap(); !cap.error.empty()) {
        std::fprintf(stderr, "switchyard: %s\n", cap.error.c_str());
        return 2;
    }
    // The CPU of 1-thread measurements likewise, for the profile workers: --pin-cpu is refused
    // when wrong; a saved choice that no longer applies (a CPU taken away by taskset or a
    // cgroup) is dropped with a word, and the default CPU is used.
    if (parser.isSet(pinCpu)) {
        const auto value = parser.value(pinCpu).toStdString();
        if (const auto error = switchyard::pin_cpu_value_error(value); !error.empty()) {
            std::fprintf(stderr, "switchyard: --pin-cpu: %s\n", error.c_str());
            return 2;
        }
        ::setenv("SWITCHYARD_PIN_CPU", value.c_str(), 1);
    } else if (!std::getenv("SWITCHYARD_PIN_CPU")) {
        if (const QString saved =
                QSettings().value(QLatin1String(switchyard::ui::kPinCpuKey)).toString();
            !saved.isEmpty()) {
            if (const auto error = switchyard::pin_cpu_value_error(saved.toStdString());
                error.empty())
                ::setenv("SWITCHYARD_PIN_CPU", qPrintable(saved), 1);
            else
                std::fprintf(stderr,
                             "switchyard: the saved CPU for 1-thread measurements is not used: "
                             "%s (View > CPU for 1-thread measurements)\n",
                             error.c_str());
        }
    }
    const QString scheme = parser.value(palette);
    if (scheme == QLatin1String("dark") || scheme == QLatin1String("light")) {
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(scheme == QLatin1String("dark")
                                     ? darkPalette()
                                     : QApplication::style()->standardPalette());
    } else if (scheme != QLatin1String("system")) {
        std::fprintf(stderr, "switchyard: --palette takes system, light or dark, not '%s'\n",
                     qPrintable(scheme));
        return 2;
    }

    // Every name the command line gives is checked before anything runs (the core's checks, as
    // the CLI's): a refused one is said on stderr and in the window's status, its action is
    // not taken (a misspelt --profile op never starts the default run), and the exit status
    // is 2.
    QStringList refused;
    QSet<QString> refusedOptions; // their actions are not taken
    const auto refuse = [&](const QString& option, const QString& error) {
        std::fprintf(stderr, "switchyard: %s\n", qPrintable(error));
        refused << error;
        refusedOptions << option;
    };
    const auto split = [&](const QCommandLineOption& o) {
        QStringList out;
        for (const auto& v : parser.value(o).split(QLatin1Char(','), Qt::SkipEmptyParts))
            out << v.trimmed();
        return out;
    };
    const auto toStd = [](const QStringList& list) {
        std::vector<std::string> out;
        for (const auto& v : list)
            out.push_back(v.toStdString());
        return out;
    };
    auto& backends = switchyard::default_backends();
    bool profiling = parser.isSet(profile);
    if (profiling) {
        switchyard::ProfileSettings settings;
        settings.ops = toStd(split(profile));
        settings.devices = toStd(split(profileDevices));
        try {
            if (settings.ops.empty())
                throw std::invalid_argument("--profile names no op");
            settings.sizes = switchyard::parse_size_tokens(toStd(split(sizes)), settings.ops);
            switchyard::check_profile_names(settings, backends, true);
            if (parser.isSet(budget)) {
                bool ok = false;
                const double b = parser.value(budget).toDouble(&ok);
                if (!ok || !(b > 0) || b > 7 * 24 * 3600)
                    throw std::invalid_argument("--budget: must be a number of seconds > 0 and "
                                                "at most 604800, got '" +
                                                parser.value(budget).toStdString() + "'");
            }
        } catch (const std::invalid_argument& e) {
            refuse(QStringLiteral("profile"), QStringLiteral("--profile: %1; nothing was run")
                                                  .arg(QString::fromStdString(e.what())));
            profiling = false;
        }
    } else {
        for (const auto* o : {&profileDevices, &sizes, &budget, &allVariants})
            if (parser.isSet(*o))
                refuse(o->names().constFirst(),
                       QStringLiteral("--%1 applies to --profile, which is not given")
                           .arg(o->names().constFirst()));
    }
    if (parser.isSet(op)) {
        switchyard::ProfileSettings settings;
        settings.ops = {parser.value(op).toStdString()};
        try {
            switchyard::check_profile_names(settings, backends, false);
        } catch (const std::invalid_argument& e) {
            refuse(QStringLiteral("op"),
                   QStringLiteral("--op: %1").arg(QString::fromStdString(e.what())));
        }
    }
    if (parser.isSet(target)) {
        try {
            switchyard::parse_target(parser.value(target).toStdString());
        } catch (const std::invalid_argument& e) {
            refuse(QStringLiteral("target"),
                   QStringLiteral("--target: %1").arg(QString::fromStdString(e.what())));
        }
    }
    if (parser.isSet(select)) {
        std::vector<std::string> names;
        for (const auto& info : backends.infos())
            names.push_back(info.name);
        const auto name = parser.value(select).toStdString();
        if (std::find(names.begin(), names.end(), name) == names.end())
            refuse(
                QStringLiteral("select"),
                QStringLiteral("--select: %1")
                    .arg(QString::fromStdString(switchyard::unknown_name("backend", name, names))));
    }
    if (parser.isSet(compare) && split(compare).size() < 2)
        refuse(QStringLiteral("compare"),
               QStringLiteral("--compare takes two or more reports, comma-separated; got '%1'")
                   .arg(parser.value(compare)));

    switchyard::ui::MainWindow window(backends, switchyard::default_devices(),
                                      switchyard::PluginSearchPath::from_environment());
    window.show();
    if (parser.isSet(openReport))
        if (const auto error = window.openReport(parser.value(openReport)); !error.isEmpty())
            refuse(QStringLiteral("open-report"), QStringLiteral("--open-report: %1").arg(error));
    if (parser.isSet(compare) && split(compare).size() >= 2)
        if (const auto error = window.compareReports(split(compare)); !error.isEmpty())
            refuse(QStringLiteral("compare"), QStringLiteral("--compare: %1").arg(error));
    if (parser.isSet(compareFolder))
        window.openFleetFolder(parser.value(compareFolder));
    if (profiling) {
        window.prepareProfile(split(profile), split(profileDevices), parser.isSet(allVariants),
                              parser.value(sizes),
                              parser.isSet(budget) ? parser.value(budget).toDouble() : 0.0);
    }
    // The refusals stay in the status bar once the catalog has arrived (it sets its own text).
    QObject::connect(&window, &switchyard::ui::MainWindow::catalogShown, &window,
                     [&window, refused] { window.showCommandLineErrors(refused); });
    std::function<void()> take; // lives as long as the event loop: its timers call it again
    if (parser.isSet(screenshot)) {
        const bool profilerPictures = profiling || parser.isSet(openReport) ||
                                      parser.isSet(compare) || parser.isSet(compareFolder) ||
                                      parser.isSet(profilerShots);
        window.resize(profilerPictures ? QSize(1920, 1000) : QSize(1280, 780));
        take = [&] {
            // The fleet folder is read off the GUI thread: wait for its table.
            if (window.fleetLoader()->isBusy()) {
                QTimer::singleShot(200, &window, take);
                return;
            }
            if (profilerPictures)
                for (const auto& p :
                     window.saveProfilerScreenshots(parser.value(screenshot), parser.value(prefix)))
                    std::printf("%s\n", qPrintable(p));
            else
                for (const auto& p :
                     window.saveScreenshots(parser.value(screenshot), parser.value(prefix)))
                    std::printf("%s\n", qPrintable(p));
            QApplication::quit();
        };
        QObject::connect(&window, &switchyard::ui::MainWindow::catalogShown, &window, [&] {
            static bool once = false;
            if (once)
                return;
            once = true;
            if (parser.isSet(select) && !refusedOptions.contains(QStringLiteral("select")))
                window.selectBackend(parser.value(select));
            if (parser.isSet(op) && !refusedOptions.contains(QStringLiteral("op")))
                window.showOp(parser.value(op));
            if (parser.isSet(target) && !refusedOptions.contains(QStringLiteral("target")))
                window.setMatrixTarget(parser.value(target));
            if (profiling) {
                QObject::connect(&window, &switchyard::ui::MainWindow::profileFinished, &window,
                                 [&] { QTimer::singleShot(500, &window, take); });
                // A run that cannot start (a size that does not fit an op) says why in the
                // log: take the pictures of that instead of waiting for a run that never ends.
                if (!window.startProfile())
                    QTimer::singleShot(500, &window, take);
                return;
            }
            // Let the resolution for the target arrive, then take the pictures.
            QTimer::singleShot(1500, &window, take);
        });
    } else if (profiling) {
        QObject::connect(&window, &switchyard::ui::MainWindow::catalogShown, &window, [&window] {
            if (!window.isProfiling() && !window.hasProfileRows())
                window.startProfile();
        });
    }
    const int status = QApplication::exec();
    return refused.isEmpty() ? status : 2;
}
