// SPDX-License-Identifier: MIT
#include "views/outlierdelegate.h"

#include <QPainter>

namespace switchyard::ui {

OutlierDelegate::OutlierDelegate(int role, QObject* parent)
    : QStyledItemDelegate(parent), m_role(role) {}

QColor OutlierDelegate::frameColor() {
    return QColor(0x8e, 0x24, 0xaa); // purple: none of the verdict colours
}

void OutlierDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                            const QModelIndex& index) const {
    QStyledItemDelegate::paint(painter, option, index);
    if (!index.data(m_role).toBool())
        return;
    painter->save();
    QPen pen(frameColor(), 2);
    pen.setJoinStyle(Qt::MiterJoin);
    painter->setPen(pen);
    painter->setBrush(Qt::NoBrush);
    painter->drawRect(QRectF(option.rect).adjusted(1, 1, -1, -1));
    // A corner mark, readable where colours are not.
    const QRectF r = option.rect;
    QPolygonF corner;
    corner << QPointF(r.left() + 1, r.top() + 1) << QPointF(r.left() + 7, r.top() + 1)
           << QPointF(r.left() + 1, r.top() + 7);
    painter->setBrush(frameColor());
    painter->drawPolygon(corner);
    painter->restore();
}

} // namespace switchyard::ui
