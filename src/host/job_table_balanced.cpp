// The kBalancedWork schedule of the job-table builder (job_table.h says why it exists).
#include "host/job_table_balanced.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

namespace zyfa {
namespace {

struct Item {
  uint32_t tile_a, tile_b;  // tile_b = kNoTile for a lone tile
  uint64_t cost;            // key blocks, overheads included
};

// How much of the work goes out as lone tiles (measured on an H200, docs/performance.md).
constexpr uint64_t kTailTiles = 6;  // lone tiles per CTA, at least
constexpr uint64_t kTailWork = 2;   // largest items per CTA, at least

uint64_t tile_cost(uint64_t m) { return m + 1 + static_cast<uint64_t>(kTileOverheadBlocks); }

// Items in execution order: the leading streams as first-with-last pairs (a lone middle tile
// when n_tiles is odd), then the tiles of the trailing streams one by one, largest first.
std::vector<Item> make_items(uint64_t streams, uint64_t n_tiles, uint64_t grid) {
  // The pairs leave the CTAs at most one pair apart. The trailing lone tiles must carry more
  // than that much work for every CTA, and come several to a CTA, for largest-first list
  // scheduling to level the finish times (checked in tests/jobs/test_job_table_balanced.cpp).
  const uint64_t max_item = n_tiles >= 2 ? tile_cost(0) + tile_cost(n_tiles - 1) : tile_cost(0);
  const uint64_t stream_work = n_tiles * (n_tiles + 1) / 2 + n_tiles * kTileOverheadBlocks;
  const uint64_t by_work = (kTailWork * grid * max_item + stream_work - 1) / stream_work;
  const uint64_t by_count = (kTailTiles * grid + n_tiles - 1) / n_tiles;
  const uint64_t tail = std::min(streams, std::max(by_work, by_count));
  const uint64_t head = streams - tail;

  std::vector<Item> items;
  items.reserve(head * ((n_tiles + 1) / 2) + tail * n_tiles);
  for (uint64_t s = 0; s < head; ++s) {
    const uint64_t base = s * n_tiles;
    for (uint64_t i = 0; i < n_tiles / 2; ++i) {
      const uint64_t j = n_tiles - 1 - i;
      items.push_back({static_cast<uint32_t>(base + i), static_cast<uint32_t>(base + j),
                       tile_cost(i) + tile_cost(j)});
    }
    if (n_tiles % 2 != 0) {
      const uint64_t mid = n_tiles / 2;
      items.push_back({static_cast<uint32_t>(base + mid), kNoTile, tile_cost(mid)});
    }
  }
  for (uint64_t m = n_tiles; m-- > 0;) {
    for (uint64_t s = head; s < streams; ++s) {
      items.push_back({static_cast<uint32_t>(s * n_tiles + m), kNoTile, tile_cost(m)});
    }
  }
  return items;
}

}  // namespace

bool build_balanced_job_table(const JobTableParams& params, JobTable* out) {
  out->words.clear();
  // The equal-jobs builder's checks: parameters in range, tile ids below kNoTile.
  if (job_table_word_count(params) == 0) return false;
  const uint64_t n_tiles =
      (static_cast<uint64_t>(params.seqlen) - 1) / static_cast<uint64_t>(params.tile_rows) + 1;
  const uint64_t streams = static_cast<uint64_t>(params.batch) * static_cast<uint64_t>(params.heads);
  const uint64_t grid = static_cast<uint64_t>(params.grid);
  // Lone tiles make more jobs than the equal-jobs table; the byte size must still fit 32 bits.
  constexpr uint64_t kMaxWords = std::numeric_limits<uint32_t>::max() / sizeof(uint32_t);
  if (grid > kMaxWords || streams * n_tiles > kMaxWords / 2 ||
      3 + grid + 2 * streams * n_tiles > kMaxWords) {
    return false;
  }

  const std::vector<Item> items = make_items(streams, n_tiles, grid);

  // List scheduling: each item to the CTA that is free first (ties: lowest index).
  using Slot = std::pair<uint64_t, uint32_t>;  // (finish time, cta)
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> free_at;
  for (uint64_t w = 0; w < grid; ++w) free_at.push({0, static_cast<uint32_t>(w)});
  std::vector<uint32_t> owner(items.size());
  std::vector<uint32_t> count(grid, 0);
  for (size_t i = 0; i < items.size(); ++i) {
    Slot s = free_at.top();
    free_at.pop();
    owner[i] = s.second;
    ++count[s.second];
    s.first += items[i].cost;
    free_at.push(s);
  }

  std::vector<uint32_t>& words = out->words;
  words.assign(3 + grid + 2 * items.size(), 0);
  words[0] = static_cast<uint32_t>(grid);
  words[1] = static_cast<uint32_t>(n_tiles);
  uint32_t* offsets = words.data() + 2;
  offsets[0] = 0;
  for (uint64_t w = 0; w < grid; ++w) offsets[w + 1] = offsets[w] + count[w];
  // Each CTA's jobs in item order.
  std::vector<uint32_t> next(offsets, offsets + grid);
  uint32_t* jobs = words.data() + 3 + grid;
  for (size_t i = 0; i < items.size(); ++i) {
    const uint32_t j = next[owner[i]]++;
    jobs[2 * j] = items[i].tile_a;
    jobs[2 * j + 1] = items[i].tile_b;
  }
  return true;
}

}  // namespace zyfa
