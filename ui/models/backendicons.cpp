// SPDX-License-Identifier: MIT
#include "models/backendicons.h"

#include <QHash>
#include <QImageReader>
#include <QPainter>
#include <QPixmap>

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

} // namespace switchyard::ui
