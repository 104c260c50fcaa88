// SPDX-License-Identifier: MIT
#pragma once

#include <QStyledItemDelegate>

namespace switchyard::ui {

/// Paints a cell as usual, then a frame around it when `role` is true (the N-report
/// table's MultiCompareModel::OutlierRole): an outlier stands out beside its verdict colour.
class OutlierDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    OutlierDelegate(int role, QObject* parent = nullptr);
    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override;
    /// The frame's colour.
    static QColor frameColor();

private:
    int m_role;
};

} // namespace switchyard::ui
