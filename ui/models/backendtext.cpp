// SPDX-License-Identifier: MIT
#include "models/backendtext.h"

#include <switchyard/sdk/version.h>

#include <QApplication>
#include <QHash>
#include <QImageReader>
#include <QPainter>
#include <QPalette>
#include <QPixmap>
#include <QStringList>

namespace switchyard::ui {
namespace {

struct IconSpec {
    const char* file;
    QColor color;
    QChar glyph;
};

IconSpec iconSpec(BackendState state, BackendCause cause) {
    switch (cause) {
    case BackendCause::OptionalDependencyMissing:
    case BackendCause::LibraryDependencyMissing:
        return {"cause-dependency", QColor(0xd9, 0x9a, 0x1e), QLatin1Char('+')};
    case BackendCause::ContractTooNew:
    case BackendCause::EntryContractTooNew:
    case BackendCause::EntryContractTooOld:
    case BackendCause::CoreTooNew:
    case BackendCause::CoreTooOld:
        return {"cause-contract", QColor(0xd9, 0x9a, 0x1e), QLatin1Char('=')};
    case BackendCause::Untrusted:
        return {"cause-untrusted", QColor(0xd2, 0x3c, 0x3c), QLatin1Char('!')};
    default:
        break;
    }
    switch (state) {
    case BackendState::Loaded:
        return {"state-loaded", QColor(0x2e, 0x9d, 0x4f), QChar(0x2713)};
    case BackendState::Discovered:
        return {"state-discovered", QColor(0x3b, 0x7d, 0xd8), QLatin1Char('i')};
    case BackendState::Unavailable:
        return {"state-unavailable", QColor(0xd9, 0x9a, 0x1e), QLatin1Char('!')};
    case BackendState::Failed:
        return {"state-failed", QColor(0xd2, 0x3c, 0x3c), QChar(0x00d7)};
    case BackendState::Invalid:
        return {"state-invalid", QColor(0x8e, 0x44, 0xad), QLatin1Char('?')};
    case BackendState::Shadowed:
        return {"state-shadowed", QColor(0x8a, 0x8a, 0x8a), QChar(0x2013)};
    }
    return {"state-discovered", QColor(0x3b, 0x7d, 0xd8), QLatin1Char('i')};
}

QIcon paintedIcon(const IconSpec& spec) {
    QIcon icon;
    for (int size : {16, 24, 32}) {
        QPixmap pm(size, size);
        pm.fill(Qt::transparent);
        QPainter p(&pm);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(QPen(QColor(0, 0, 0, 64), 1));
        p.setBrush(spec.color);
        p.drawEllipse(QRectF(0.5, 0.5, size - 1, size - 1));
        QFont f = p.font();
        f.setBold(true);
        f.setPixelSize(size * 3 / 4);
        p.setFont(f);
        p.setPen(Qt::white);
        p.drawText(QRect(0, 0, size, size), Qt::AlignCenter, QString(spec.glyph));
        icon.addPixmap(pm);
    }
    return icon;
}

bool canRenderSvg() {
    static const bool yes = QImageReader::supportedImageFormats().contains("svg");
    return yes;
}

} // namespace

QIcon stateIcon(BackendState state, BackendCause cause) {
    // One icon per state and cause, made once (painting it costs more than a tree row):
    // icons are made and used on the GUI thread only. Never destroyed, like the application's
    // own pixmap cache, so no icon outlives the application's teardown order.
    static auto* made = new QHash<int, QIcon>;
    const int key = int(state) * 1024 + int(cause);
    if (auto it = made->constFind(key); it != made->constEnd())
        return *it;
    const IconSpec spec = iconSpec(state, cause);
    QIcon icon =
        canRenderSvg()
            ? QIcon(QStringLiteral(":/switchyard/icons/%1.svg").arg(QLatin1String(spec.file)))
            : paintedIcon(spec);
    made->insert(key, icon);
    return icon;
}

QIcon backendIcon(const BackendInfo& info) {
    return stateIcon(info.state, info.cause);
}

QString whyText(const BackendInfo& info) {
    switch (info.cause) {
    case BackendCause::None:
        return info.is_available() ? QString() : qs(info.error);
    case BackendCause::OptionalDependencyMissing: {
        QStringList parts;
        for (const auto& d : info.dependencies)
            if (!d.found)
                parts << QStringLiteral("missing %1 — %2")
                             .arg(qs(d.dependency.name), qs(d.dependency.hint));
        if (!parts.isEmpty())
            return parts.join(QLatin1Char('\n'));
        break;
    }
    case BackendCause::LibraryDependencyMissing:
        if (info.library_report && !info.library_report->unresolved().empty()) {
            QStringList names;
            for (const auto& s : info.library_report->unresolved_with_requester())
                names << qs(s);
            return QStringLiteral("missing %1 — install the package that provides it, or add "
                                  "its folder to LD_LIBRARY_PATH")
                .arg(names.join(QStringLiteral(", ")));
        }
        break;
    case BackendCause::ContractTooNew:
        return QStringLiteral("contract %1 needs a newer Switchyard (this one implements %2)")
            .arg(info.capabilities.contract_version)
            .arg(kContractVersion);
    case BackendCause::CoreTooOld:
        return QStringLiteral("needs Switchyard %1 or newer (this is %2)")
            .arg(qs(info.capabilities.min_core_version.value_or("?")), qs(core_version()));
    case BackendCause::CoreTooNew:
        return QStringLiteral("needs Switchyard %1 or older (this is %2)")
            .arg(qs(info.capabilities.max_core_version.value_or("?")), qs(core_version()));
    case BackendCause::Shadowed:
        return QStringLiteral("shadowed by %1").arg(qs(info.shadowed_by));
    default:
        break;
    }
    return qs(info.error);
}

QString installHints(const BackendInfo& info) {
    QStringList lines;
    for (const auto& d : info.dependencies)
        if (!d.found && !d.dependency.hint.empty())
            lines << qs(d.dependency.hint);
    if (info.library_report)
        for (const auto& s : info.library_report->unresolved())
            lines << QStringLiteral("apt-file search %1   # find the package that ships it")
                         .arg(qs(s));
    return lines.join(QLatin1Char('\n'));
}

QColor toneColor(Tone tone, bool background) {
    const bool dark = QApplication::palette().color(QPalette::Base).lightness() < 128;
    switch (tone) {
    case Tone::Good:
        return background ? (dark ? QColor(0x1f, 0x4d, 0x2b) : QColor(0xcf, 0xf0, 0xd6))
                          : (dark ? QColor(0x7c, 0xd9, 0x92) : QColor(0x1e, 0x7b, 0x3a));
    case Tone::Warning:
        return background ? (dark ? QColor(0x5a, 0x46, 0x14) : QColor(0xfb, 0xe8, 0xc0))
                          : (dark ? QColor(0xf0, 0xc0, 0x60) : QColor(0x9a, 0x62, 0x00));
    case Tone::Bad:
        return background ? (dark ? QColor(0x5c, 0x22, 0x22) : QColor(0xf8, 0xd0, 0xd0))
                          : (dark ? QColor(0xff, 0x80, 0x80) : QColor(0xc0, 0x1c, 0x1c));
    case Tone::Winner:
        return background ? (dark ? QColor(0x1d, 0x4f, 0x8a) : QColor(0x9c, 0xc8, 0xf5))
                          : (dark ? QColor(0x8c, 0xc0, 0xff) : QColor(0x12, 0x4f, 0x9c));
    case Tone::Muted:
        return background ? QApplication::palette().color(QPalette::AlternateBase)
                          : QApplication::palette().color(QPalette::Disabled, QPalette::Text);
    }
    return {};
}

} // namespace switchyard::ui
