// SPDX-License-Identifier: MIT
#include "util/difflib.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace switchyard::difflib {

namespace {

inline unsigned char byte_of(char c) {
    return static_cast<unsigned char>(c);
}

// difflib._calculate_ratio
double calculate_ratio(std::size_t matches, std::size_t length) {
    if (length != 0) {
        return 2.0 * static_cast<double>(matches) / static_cast<double>(length);
    }
    return 1.0;
}

// Python's repr() of a float, close enough for an error message.
std::string float_repr(double v) {
    if (std::isnan(v)) {
        return "nan";
    }
    if (std::isinf(v)) {
        return v > 0 ? "inf" : "-inf";
    }
    std::ostringstream os;
    os.precision(17);
    os << v;
    return os.str();
}

} // namespace

sequence_matcher::sequence_matcher(std::function<bool(char)> isjunk, std::string_view a,
                                   std::string_view b, bool autojunk)
    : isjunk_(std::move(isjunk)), autojunk_(autojunk) {
    set_seqs(a, b);
}

void sequence_matcher::set_seqs(std::string_view a, std::string_view b) {
    set_seq1(a);
    set_seq2(b);
}

void sequence_matcher::set_seq1(std::string_view a) {
    a_ = a;
    have_matching_blocks_ = false;
    matching_blocks_.clear();
}

void sequence_matcher::set_seq2(std::string_view b) {
    b_ = b;
    have_matching_blocks_ = false;
    matching_blocks_.clear();
    chain_b();
}

// SequenceMatcher.__chain_b
void sequence_matcher::chain_b() {
    for (auto& v : b2j_) {
        v.clear();
    }
    b2j_present_.fill(false);
    bjunk_.fill(false);
    bpopular_.fill(false);
    fullbcount_.fill(0);

    for (std::size_t i = 0; i < b_.size(); ++i) {
        const unsigned char elt = byte_of(b_[i]);
        b2j_[elt].push_back(i);
        b2j_present_[elt] = true;
        ++fullbcount_[elt]; // quick_ratio's fullbcount, which never excludes junk
    }

    // Purge junk elements.
    if (isjunk_) {
        for (std::size_t elt = 0; elt < 256; ++elt) {
            if (b2j_present_[elt] && isjunk_(static_cast<char>(elt))) {
                bjunk_[elt] = true;
            }
        }
        for (std::size_t elt = 0; elt < 256; ++elt) {
            if (bjunk_[elt]) {
                b2j_present_[elt] = false;
                b2j_[elt].clear();
            }
        }
    }

    // Purge popular elements that are not junk.
    const std::size_t n = b_.size();
    if (autojunk_ && n >= 200) {
        const std::size_t ntest = n / 100 + 1;
        for (std::size_t elt = 0; elt < 256; ++elt) {
            if (b2j_present_[elt] && b2j_[elt].size() > ntest) {
                bpopular_[elt] = true;
            }
        }
        for (std::size_t elt = 0; elt < 256; ++elt) {
            if (bpopular_[elt]) {
                b2j_present_[elt] = false;
                b2j_[elt].clear();
            }
        }
    }

    j2len_.assign(n + 1, 0);
    newj2len_.assign(n + 1, 0);
}

// SequenceMatcher.find_longest_match
match sequence_matcher::find_longest_match(std::size_t alo, std::size_t ahi, std::size_t blo,
                                           std::size_t bhi) const {
    const std::string_view a = a_;
    const std::string_view b = b_;
    ahi = std::min(ahi, a.size());
    bhi = std::min(bhi, b.size());
    auto isbjunk = [this](char c) { return bjunk_[byte_of(c)]; };

    std::size_t besti = alo;
    std::size_t bestj = blo;
    std::size_t bestsize = 0;

    // j2len[j + 1] = length of the longest junk-free match ending with a[i-1] and b[j];
    // index 0 stands for j == -1 and is always 0. Only the entries listed in `touched`
    // are non-zero, so each row is cleared in time proportional to its size.
    std::vector<std::size_t>& j2len = j2len_;
    std::vector<std::size_t>& newj2len = newj2len_;
    std::vector<std::size_t> touched;
    std::vector<std::size_t> newtouched;
    for (std::size_t i = alo; i < ahi; ++i) {
        const unsigned char elt = byte_of(a[i]);
        if (b2j_present_[elt]) {
            for (const std::size_t j : b2j_[elt]) {
                // a[i] matches b[j]
                if (j < blo) {
                    continue;
                }
                if (j >= bhi) {
                    break;
                }
                const std::size_t k = j2len[j] + 1; // j2len.get(j - 1, 0) + 1
                newj2len[j + 1] = k;
                newtouched.push_back(j + 1);
                if (k > bestsize) {
                    besti = i - k + 1;
                    bestj = j - k + 1;
                    bestsize = k;
                }
            }
        }
        // j2len = newj2len
        for (const std::size_t idx : touched) {
            j2len[idx] = 0;
        }
        std::swap(j2len, newj2len);
        touched.swap(newtouched);
        newtouched.clear();
    }
    for (const std::size_t idx : touched) {
        j2len[idx] = 0;
    }
    // j2len_/newj2len_ may have been swapped an odd number of times: both are all-zero
    // again, so which is which does not matter.

    // Extend the best by non-junk elements on each end ("popular" elements included).
    while (besti > alo && bestj > blo && !isbjunk(b[bestj - 1]) && a[besti - 1] == b[bestj - 1]) {
        --besti;
        --bestj;
        ++bestsize;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && !isbjunk(b[bestj + bestsize]) &&
           a[besti + bestsize] == b[bestj + bestsize]) {
        ++bestsize;
    }

    // Then suck up matching junk on each side.
    while (besti > alo && bestj > blo && isbjunk(b[bestj - 1]) && a[besti - 1] == b[bestj - 1]) {
        --besti;
        --bestj;
        ++bestsize;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && isbjunk(b[bestj + bestsize]) &&
           a[besti + bestsize] == b[bestj + bestsize]) {
        ++bestsize;
    }

    return match{besti, bestj, bestsize};
}

// SequenceMatcher.get_matching_blocks
const std::vector<match>& sequence_matcher::get_matching_blocks() const {
    if (have_matching_blocks_) {
        return matching_blocks_;
    }
    const std::size_t la = a_.size();
    const std::size_t lb = b_.size();

    std::vector<std::tuple<std::size_t, std::size_t, std::size_t, std::size_t>> queue;
    queue.emplace_back(0, la, 0, lb);
    std::vector<match> blocks;
    while (!queue.empty()) {
        const auto [alo, ahi, blo, bhi] = queue.back();
        queue.pop_back();
        const match x = find_longest_match(alo, ahi, blo, bhi);
        const std::size_t i = x.a;
        const std::size_t j = x.b;
        const std::size_t k = x.size;
        if (k != 0) {
            blocks.push_back(x);
            if (alo < i && blo < j) {
                queue.emplace_back(alo, i, blo, j);
            }
            if (i + k < ahi && j + k < bhi) {
                queue.emplace_back(i + k, ahi, j + k, bhi);
            }
        }
    }
    std::sort(blocks.begin(), blocks.end());

    // Collapse adjacent blocks.
    std::size_t i1 = 0;
    std::size_t j1 = 0;
    std::size_t k1 = 0;
    std::vector<match> non_adjacent;
    for (const match& m : blocks) {
        if (i1 + k1 == m.a && j1 + k1 == m.b) {
            k1 += m.size;
        } else {
            if (k1 != 0) {
                non_adjacent.push_back(match{i1, j1, k1});
            }
            i1 = m.a;
            j1 = m.b;
            k1 = m.size;
        }
    }
    if (k1 != 0) {
        non_adjacent.push_back(match{i1, j1, k1});
    }
    non_adjacent.push_back(match{la, lb, 0});

    matching_blocks_ = std::move(non_adjacent);
    have_matching_blocks_ = true;
    return matching_blocks_;
}

double sequence_matcher::ratio() const {
    std::size_t matches = 0;
    for (const match& m : get_matching_blocks()) {
        matches += m.size;
    }
    return calculate_ratio(matches, a_.size() + b_.size());
}

double sequence_matcher::quick_ratio() const {
    // Viewing a and b as multisets, matches is the size of their intersection. avail[x]
    // is the number of times x appears in b less the number of times it has been seen in a
    // so far (it may go negative, as in Python); availhas[x] says whether avail has x.
    std::array<long long, 256> avail{};
    std::array<bool, 256> availhas{};
    std::size_t matches = 0;
    for (const char c : a_) {
        const unsigned char elt = byte_of(c);
        const long long numb =
            availhas[elt] ? avail[elt] : static_cast<long long>(fullbcount_[elt]);
        avail[elt] = numb - 1;
        availhas[elt] = true;
        if (numb > 0) {
            ++matches;
        }
    }
    return calculate_ratio(matches, a_.size() + b_.size());
}

double sequence_matcher::real_quick_ratio() const {
    const std::size_t la = a_.size();
    const std::size_t lb = b_.size();
    return calculate_ratio(std::min(la, lb), la + lb);
}

double ratio(std::string_view a, std::string_view b) {
    const sequence_matcher s({}, a, b);
    return s.ratio();
}

std::vector<std::string> get_close_matches(std::string_view word,
                                           const std::vector<std::string>& possibilities,
                                           std::size_t n, double cutoff) {
    if (n == 0) {
        throw std::invalid_argument("get_close_matches: n must be > 0: 0");
    }
    if (!(0.0 <= cutoff && cutoff <= 1.0)) {
        throw std::invalid_argument("get_close_matches: cutoff must be in [0.0, 1.0]: " +
                                    float_repr(cutoff));
    }

    std::vector<std::pair<double, const std::string*>> result;
    sequence_matcher s;
    s.set_seq2(word);
    for (const std::string& x : possibilities) {
        s.set_seq1(x);
        if (s.real_quick_ratio() >= cutoff && s.quick_ratio() >= cutoff) {
            const double score = s.ratio();
            if (score >= cutoff) {
                result.emplace_back(score, &x);
            }
        }
    }

    // heapq.nlargest(n, result): the n largest (score, x) tuples, largest first. Tuples
    // that compare equal are equal strings, so the order among them is unobservable.
    auto greater = [](const std::pair<double, const std::string*>& l,
                      const std::pair<double, const std::string*>& r) {
        if (l.first != r.first) {
            return l.first > r.first;
        }
        return *l.second > *r.second; // std::string compares bytes as unsigned char
    };
    const std::size_t take = std::min(n, result.size());
    std::partial_sort(result.begin(), result.begin() + static_cast<std::ptrdiff_t>(take),
                      result.end(), greater);

    std::vector<std::string> out;
    out.reserve(take);
    for (std::size_t i = 0; i < take; ++i) {
        out.push_back(*result[i].second);
    }
    return out;
}

} // namespace switchyard::difflib
