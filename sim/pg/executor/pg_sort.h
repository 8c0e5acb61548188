// sim/pg/executor/pg_sort.h: the order PostgreSQL's in-memory sort leaves rows whose sort keys
// tie. PostgreSQL 15 sorts a Sort node's tuples (and an aggregate's ORDER BY, a window's input)
// with tuplesort: its quicksort (src/include/lib/sort_template.h: an insertion sort below 7
// elements, a check for an already sorted range, the median of three (of three medians above 40
// elements), three-way partitioning that moves the pivot's equals to the ends, then the smaller
// side first) is not stable, and with a bound (LIMIT k right above the Sort, no LockRows between)
// and more than 2k input tuples tuplesort keeps a bounded heap of the k least instead
// (tuplesort.c's make_bounded_heap, sort_bounded_heap). Both are rebuilt here step for step, so
// equal keys come out in the server's order for the same input order (the scan's heap order).
// Guarantees: a permutation of the input (bounded: its `bound` least), ordered by `cmp`; the
// same input gives the same output.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace lockstep::sim::pg {

namespace pg_sort_detail {

// sort_template.h's quicksort of v[first, first + n), cmp(a, b) < 0, 0 or > 0.
template <class T, class Cmp>
void quicksort(std::vector<T>& v, std::size_t first, std::size_t n, const Cmp& cmp) {
  const auto c = [&](std::size_t i, std::size_t j) { return cmp(v[i], v[j]); };
  const auto med3 = [&](std::size_t a, std::size_t b, std::size_t d) {
    return c(a, b) < 0 ? (c(b, d) < 0 ? b : (c(a, d) < 0 ? d : a)) : (c(b, d) > 0 ? b : (c(a, d) < 0 ? a : d));
  };
  const auto swapn = [&](std::size_t a, std::size_t b, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) std::swap(v[a + i], v[b + i]);
  };
  std::size_t a = first;
  for (;;) {
    if (n < 7) {
      for (std::size_t m = a + 1; m < a + n; ++m) {
        for (std::size_t l = m; l > a && c(l - 1, l) > 0; --l) std::swap(v[l], v[l - 1]);
      }
      return;
    }
    bool presorted = true;
    for (std::size_t m = a + 1; m < a + n && presorted; ++m) presorted = c(m - 1, m) <= 0;
    if (presorted) return;
    std::size_t m = a + n / 2;
    if (n > 7) {
      std::size_t l = a, last = a + n - 1;
      if (n > 40) {
        const std::size_t d = n / 8;
        l = med3(l, l + d, l + 2 * d);
        m = med3(m - d, m, m + d);
        last = med3(last - 2 * d, last - d, last);
      }
      m = med3(l, m, last);
    }
    std::swap(v[a], v[m]);
    std::size_t pa = a + 1, pb = a + 1;
    // pc, pd may pass below a + 1 (to a): kept as signed positions
    std::ptrdiff_t pc = static_cast<std::ptrdiff_t>(a + n - 1), pd = pc;
    for (;;) {
      int r = 0;
      while (static_cast<std::ptrdiff_t>(pb) <= pc && (r = c(pb, a)) <= 0) {
        if (r == 0) std::swap(v[pa++], v[pb]);
        ++pb;
      }
      while (static_cast<std::ptrdiff_t>(pb) <= pc && (r = c(static_cast<std::size_t>(pc), a)) >= 0) {
        if (r == 0) std::swap(v[static_cast<std::size_t>(pc)], v[static_cast<std::size_t>(pd--)]);
        --pc;
      }
      if (static_cast<std::ptrdiff_t>(pb) > pc) break;
      std::swap(v[pb++], v[static_cast<std::size_t>(pc--)]);
    }
    const std::size_t pn = a + n;
    std::size_t d1 = std::min(pa - a, pb - pa);
    swapn(a, pb - d1, d1);
    const auto upd = static_cast<std::size_t>(pd), upc = static_cast<std::size_t>(pc);
    d1 = std::min(upd - upc, pn - upd - 1);
    swapn(pb, pn - d1, d1);
    d1 = pb - pa;
    const std::size_t d2 = upd - upc;
    if (d1 <= d2) {
      if (d1 > 1) quicksort(v, a, d1, cmp);
      if (d2 <= 1) return;
      a = pn - d2;
      n = d2;
    } else {
      if (d2 > 1) quicksort(v, pn - d2, d2, cmp);
      if (d1 <= 1) return;
      n = d1;
    }
  }
}

// tuplesort's heap of the bound least in heap[0, n), in reversed order (its top the greatest):
// rcmp is -cmp. tuplesort_heap_replace_top: `item` in place of the top, sifted down.
template <class T, class Cmp>
void heap_replace_top(std::vector<T>& heap, std::size_t n, T item, const Cmp& rcmp) {
  std::size_t i = 0;
  for (;;) {
    std::size_t j = 2 * i + 1;
    if (j >= n) break;
    if (j + 1 < n && rcmp(heap[j], heap[j + 1]) > 0) ++j;
    if (rcmp(item, heap[j]) <= 0) break;
    heap[i] = std::move(heap[j]);
    i = j;
  }
  heap[i] = std::move(item);
}

// tuplesort_heap_insert: `item` at the end, sifted up.
template <class T, class Cmp>
void heap_insert(std::vector<T>& heap, T item, const Cmp& rcmp) {
  std::size_t j = heap.size();
  heap.push_back(item);
  while (j > 0) {
    const std::size_t i = (j - 1) / 2;
    if (rcmp(item, heap[i]) >= 0) break;
    heap[j] = std::move(heap[i]);
    j = i;
  }
  heap[j] = std::move(item);
}

}  // namespace pg_sort_detail

// Sorts `items` (in the order they reach the Sort) as PostgreSQL's tuplesort does in memory;
// `bound` > 0: a Limit's limit + offset passed down to it (tuplesort_set_bound), and then only the
// first `bound` of the sorted rows are kept.
template <class T, class Cmp>
void pg_sort(std::vector<T>& items, const Cmp& cmp, std::size_t bound = 0) {
  using namespace pg_sort_detail;
  if (bound == 0 || items.size() <= 2 * bound) {  // tuplesort switches to the heap past 2 * bound
    if (items.size() > 1) quicksort(items, 0, items.size(), cmp);
    if (bound != 0 && items.size() > bound) items.resize(bound);
    return;
  }
  const auto rcmp = [&](const T& a, const T& b) { return -cmp(a, b); };
  std::vector<T> heap;
  heap.reserve(bound);
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (heap.size() < bound) {
      heap_insert(heap, std::move(items[i]), rcmp);
    } else if (rcmp(items[i], heap[0]) > 0) {  // less than the greatest kept: it replaces it
      heap_replace_top(heap, heap.size(), std::move(items[i]), rcmp);
    }
  }
  // sort_bounded_heap: the top (the greatest left) goes to the slot the shrinking heap frees.
  for (std::size_t count = heap.size(); count > 1; --count) {
    T top = std::move(heap[0]);
    T last = std::move(heap[count - 1]);
    heap_replace_top(heap, count - 1, std::move(last), rcmp);
    heap[count - 1] = std::move(top);
  }
  items = std::move(heap);
}

// pg_sort by a strict weak order `less` (a three-way comparison made of two calls).
template <class T, class Less>
void pg_sort_less(std::vector<T>& items, const Less& less, std::size_t bound = 0) {
  pg_sort(items, [&](const T& a, const T& b) { return less(a, b) ? -1 : less(b, a) ? 1 : 0; }, bound);
}

// `items` in the order of `keys` (sorted pairs of a key and an item's index).
template <class T, class K>
std::vector<T> in_key_order(std::vector<T> items, const std::vector<std::pair<K, std::size_t>>& keys) {
  std::vector<T> sorted;
  sorted.reserve(keys.size());
  for (const auto& k : keys) sorted.push_back(std::move(items[k.second]));
  return sorted;
}

}  // namespace lockstep::sim::pg
