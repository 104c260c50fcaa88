// SPDX-License-Identifier: MIT
#include "models/dependencymodel.h"

#include "models/qtstring.h"
#include "models/tone.h"

#include <QFont>

#include <map>

namespace switchyard::ui {

DependencyModel::DependencyModel(QObject* parent)
    : TreeModel({tr("Dependency"), tr("Status"), tr("Where found / what to install")}, parent) {}

void DependencyModel::setBackend(const BackendInfo* info) {
    beginBuild();
    if (info) {
        QFont bold;
        bold.setBold(true);
        const int opt =
            addNode(kRoot, {tr("Optional dependencies"),
                            tr("%n declared", nullptr, int(info->dependencies.size()))});
        setCellRole(opt, NameColumn, Qt::FontRole, bold);
        for (const auto& d : info->dependencies) {
            const QString where =
                d.found ? qs(d.location)
                        : qs(d.dependency.hint) + (d.detail.empty()
                                                       ? QString()
                                                       : QStringLiteral(" (%1)").arg(qs(d.detail)));
            QHash<int, QVariant> roles{
                {FoundRole, d.found}, {SortRole, qs(d.dependency.name)}, {Qt::ToolTipRole, where}};
            if (!d.found)
                roles.insert(Qt::ForegroundRole, toneColor(Tone::Bad));
            addNode(opt,
                    {QStringLiteral("%1 (%2)").arg(qs(d.dependency.name),
                                                   qs(to_string(d.dependency.kind))),
                     d.found ? tr("found") : tr("missing"), where},
                    roles);
        }
        if (info->library_report) {
            const auto& r = *info->library_report;
            const auto unresolved = r.unresolved();
            // Where the static load simulation says the loader stops although every file is
            // there (a symbol version, a symbol, another architecture): per object.
            std::map<std::string, std::vector<const LoadProblem*>> problemsOf, lacksOf;
            for (const auto& p : r.load_problems) {
                problemsOf[p.object].push_back(&p);
                if (!p.provider.empty())
                    lacksOf[p.provider].push_back(&p); // the library that lacks the version
            }
            // "GLIBCXX_3.4.99" (of "GLIBCXX_3.4.99 from libstdc++.so.6") and what the provider
            // has instead, for the provider's own node.
            auto providerLacks = [&](const std::string& path) -> std::pair<QString, QString> {
                const auto it = lacksOf.find(path);
                if (it == lacksOf.end())
                    return {};
                QStringList versions, has;
                for (const auto* p : it->second) {
                    versions << qs(p->missing.substr(0, p->missing.find(" from ")));
                    if (!has.contains(qs(p->provided)))
                        has << qs(p->provided);
                }
                return {tr("LACKS %1").arg(versions.join(QStringLiteral(", "))),
                        tr("provides %1").arg(has.join(QStringLiteral("; ")))};
            };
            // Short, for the cell (the node already names the object): "needs GLIBCXX_3.4.99
            // from libstdc++.so.6"; the whole message in the tooltip.
            auto lacks = [&](const std::string& object, bool whole = false) {
                QStringList out;
                if (const auto it = problemsOf.find(object); it != problemsOf.end())
                    for (const auto* p : it->second)
                        out << (whole ? qs(p->message)
                                : p->cause == BackendCause::UndefinedSymbol
                                    ? tr("imports %1, defined nowhere").arg(qs(p->missing))
                                : p->cause == BackendCause::WrongArchitecture
                                    ? tr("built for %1").arg(qs(p->missing))
                                : p->cause == BackendCause::LibraryTruncated
                                    ? tr("cut off: %1").arg(qs(p->missing))
                                : p->cause == BackendCause::LibraryNotElf ||
                                        p->cause == BackendCause::LibraryNotLoadable
                                    ? tr("is %1").arg(qs(p->missing))
                                    : tr("needs %1").arg(qs(p->missing)));
                return out.join(whole ? QStringLiteral("\n") : QStringLiteral("; "));
            };
            const QString rootLacks = lacks(r.library);
            const int lib = addNode(
                kRoot,
                {qs(r.library),
                 !rootLacks.isEmpty() ? tr("FAILS TO LOAD")
                 : !r.readable        ? tr("unreadable")
                 : unresolved.empty()
                     ? (r.load_problems.empty() ? tr("all resolved") : tr("resolved; fails below"))
                     : tr("%n unresolved", nullptr, int(unresolved.size())),
                 !rootLacks.isEmpty() ? rootLacks
                 : r.readable         ? tr("ELF dependencies (DT_NEEDED), resolved like ld.so")
                                      : qs(r.error)},
                {{Qt::ToolTipRole, rootLacks.isEmpty() ? qs(r.library) : lacks(r.library, true)},
                 {FailsRole, !rootLacks.isEmpty()}});
            setCellRole(lib, NameColumn, Qt::FontRole, bold);
            if (!r.readable || !unresolved.empty() || !r.load_problems.empty())
                setCellRole(lib, StatusColumn, Qt::ForegroundRole, toneColor(Tone::Bad));
            // Refused itself: the loader never reads its DT_NEEDED entries, so none is shown
            // as missing.
            if (!r.dependencies_read)
                addNode(lib,
                        {tr("Dependencies (DT_NEEDED)"), tr("not read by the loader"),
                         tr("the loader refuses the library itself first")},
                        {{SortRole, QString()}});
            // Each object's node, so a dependency of a dependency nests under it.
            std::map<std::string, int> nodeOf{{r.library, lib}};
            for (const auto& d : r.dependencies) {
                const auto parentIt = nodeOf.find(d.needed_by);
                const int parent = parentIt != nodeOf.end() ? parentIt->second : lib;
                const auto [lacking, provides] =
                    d.found() ? providerLacks(d.path) : std::pair<QString, QString>{};
                const QString fails = d.found() ? lacks(d.path) : QString();
                const QString where = !fails.isEmpty()      ? fails
                                      : !provides.isEmpty() ? provides + " (" + qs(d.path) + ")"
                                      : d.found()           ? qs(d.path)
                                                            : qs(d.detail);
                QHash<int, QVariant> roles{{FoundRole, d.found()},
                                           {FailsRole, !fails.isEmpty()},
                                           {SortRole, qs(d.soname)},
                                           {Qt::ToolTipRole, where}};
                if (!d.found() || !fails.isEmpty() || !lacking.isEmpty()) {
                    QFont f;
                    f.setBold(true);
                    roles.insert(Qt::ForegroundRole, toneColor(Tone::Bad));
                    roles.insert(Qt::FontRole, f);
                }
                const int id = addNode(parent,
                                       {qs(d.soname),
                                        !fails.isEmpty()     ? tr("FAILS TO LOAD")
                                        : !lacking.isEmpty() ? lacking
                                        : d.found()          ? qs(to_string(d.source))
                                                             : tr("NOT FOUND"),
                                        where},
                                       roles);
                if (d.found() && !nodeOf.count(d.path))
                    nodeOf.emplace(d.path, id);
            }
        }
    }
    endBuild();
}

} // namespace switchyard::ui
