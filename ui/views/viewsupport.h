// SPDX-License-Identifier: MIT
#pragma once

#include "models/tone.h"

#include <QLabel>
#include <QPalette>
#include <QString>
#include <QWidget>

namespace switchyard::ui {

/// Names a control once for everything that looks for it: its objectName (what tests and
/// scripts find it by: `findChild<QPushButton*>("runButton")`) and what a screen reader says
/// (accessible name and description, the description also the tooltip when it has none).
inline void identify(QWidget* w, const char* id, const QString& name,
                     const QString& description = {}) {
    w->setObjectName(QString::fromLatin1(id));
    w->setAccessibleName(name);
    if (!description.isEmpty()) {
        w->setAccessibleDescription(description);
        if (w->toolTip().isEmpty())
            w->setToolTip(description);
    }
}

/// A banner above a table (hidden until it has something to say): word-wrapped, selectable
/// so it can be copied, on the tone's background with text that stays readable on it.
inline QLabel* makeBanner(Tone tone) {
    auto* banner = new QLabel;
    banner->setWordWrap(true);
    banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    banner->setAutoFillBackground(true);
    QPalette pal = banner->palette();
    pal.setColor(QPalette::Window, toneColor(tone, true));
    pal.setColor(QPalette::WindowText, QColor(0x20, 0x20, 0x20)); // dark on the light tone
    banner->setPalette(pal);
    banner->setContentsMargins(6, 4, 6, 4);
    banner->hide();
    return banner;
}

} // namespace switchyard::ui
