// SPDX-License-Identifier: MIT
#pragma once

// A faithful port of the parts of CPython 3.11's difflib that "did you mean ...?"
// suggestions need: SequenceMatcher (find_longest_match, get_matching_blocks, ratio,
// quick_ratio, real_quick_ratio, with the b2j junk handling and the autojunk
// "popular elements" heuristic) and get_close_matches.
//
// Sequences are the bytes of a std::string / std::string_view: each byte is one element.
// For ASCII text (all Switchyard names are ASCII) this gives exactly the results of
// Python on the same str. For non-ASCII UTF-8 text the results are those of Python on the
// corresponding bytes object, not on the decoded str. Result order ties are broken by
// byte-wise (unsigned) string comparison, which equals Python's code-point order for ASCII.
//
// Private to switchyard-core: no Qt.

#include <array>
#include <compare>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard::difflib {

/// One matching block: a[a .. a+size) == b[b .. b+size). Python's difflib.Match.
struct match {
    std::size_t a = 0;
    std::size_t b = 0;
    std::size_t size = 0;

    friend bool operator==(const match&, const match&) = default;
    friend auto operator<=>(const match&, const match&) = default;
};

/// difflib.SequenceMatcher over the bytes of two strings.
///
/// The matcher views the strings it is given (set_seq1/set_seq2/set_seqs): the caller keeps
/// the underlying characters alive while the matcher uses them. As in Python, the
/// information about b (the second sequence) is computed once by set_seq2, so to compare
/// one string against many, set_seq2 it once and set_seq1 each of the others.
class sequence_matcher {
public:
    /// isjunk: Python's isjunk (nullptr/empty means None). autojunk: the "popular
    /// elements" heuristic, applied when b has 200 or more elements.
    explicit sequence_matcher(std::function<bool(char)> isjunk = {}, std::string_view a = {},
                              std::string_view b = {}, bool autojunk = true);

    void set_seqs(std::string_view a, std::string_view b);
    void set_seq1(std::string_view a);
    void set_seq2(std::string_view b);

    /// Longest matching block in a[alo:ahi] and b[blo:bhi] (Python semantics and tie rules).
    match find_longest_match(std::size_t alo, std::size_t ahi, std::size_t blo,
                             std::size_t bhi) const;
    match find_longest_match() const { return find_longest_match(0, a_.size(), 0, b_.size()); }

    /// Matching blocks, ending with the dummy (len(a), len(b), 0). Cached until a or b changes.
    const std::vector<match>& get_matching_blocks() const;

    double ratio() const;
    double quick_ratio() const;
    double real_quick_ratio() const;

    /// Elements of b treated as junk (isjunk) and as popular (autojunk), for inspection.
    bool is_bjunk(char c) const { return bjunk_[static_cast<unsigned char>(c)]; }
    bool is_bpopular(char c) const { return bpopular_[static_cast<unsigned char>(c)]; }

private:
    void chain_b();

    std::function<bool(char)> isjunk_;
    bool autojunk_ = true;
    std::string_view a_;
    std::string_view b_;

    // b2j: for each byte value, the increasing indices in b where it appears; junk and
    // popular elements have no entry (b2j_present_ false).
    std::array<std::vector<std::size_t>, 256> b2j_;
    std::array<bool, 256> b2j_present_{};
    std::array<bool, 256> bjunk_{};
    std::array<bool, 256> bpopular_{};
    std::array<std::size_t, 256> fullbcount_{};

    mutable bool have_matching_blocks_ = false;
    mutable std::vector<match> matching_blocks_;
    // Scratch for find_longest_match (the j2len dicts), indexed by j + 1, kept all-zero
    // between calls.
    mutable std::vector<std::size_t> j2len_;
    mutable std::vector<std::size_t> newj2len_;
};

/// SequenceMatcher(None, a, b).ratio(): 2*M/T, or 1.0 when both are empty.
double ratio(std::string_view a, std::string_view b);

/// difflib.get_close_matches(word, possibilities, n, cutoff): the best (at most n)
/// possibilities that score at least cutoff against word, best first; equal scores are
/// ordered by the candidate string, descending (heapq.nlargest on (score, x) tuples).
/// Throws std::invalid_argument if n == 0 or cutoff is not in [0.0, 1.0].
/// Note: Python's default n is 3; this API's default is 2.
std::vector<std::string> get_close_matches(std::string_view word,
                                           const std::vector<std::string>& possibilities,
                                           std::size_t n = 2, double cutoff = 0.6);

} // namespace switchyard::difflib
