#pragma once
// SweepGrid: the grid of `dtbench sweep` (docs/sweep.md) parsed, validated, expanded into points
// and named. Pure: no files are read here except by readGridFile, no process is started.
//
// Contract:
//  - An axis is `KEY=V1,V2,...` (spaces around KEY and each value are trimmed). Keys are lower-case
//    train flag names ([a-z0-9-], starting with a letter). `world` (alias `gpus`) is the number of
//    ranks, a positive integer; `nodes` is the number of nodes the ranks are placed on, a positive
//    integer, each node running the sweep's --ranks-per-node K ranks (so a point's world is
//    nodes × K; `world` and `nodes` together are refused: with nodes the world follows from them);
//    `batch` (alias `batch-size`) means `--batch-size`, a positive integer; `mode` is `--mode`, ddp
//    (one process per rank) or dp (one process driving several local GPUs, DataParallel): a dp
//    point is one process, so its world is 1 and the `world` value (1 without a world axis) is the
//    number of GPUs that process drives (GridPoint::processGpus); dp beside a nodes axis is refused
//    (one process runs on one machine). Any other key K becomes the train flag `--K V`. The sweep
//    owns `out`, `rank`, `world-size` and `resume`, so they are refused as keys.
//  - The grid file holds one axis per line; `#` starts a comment; blank lines are skipped.
//  - expandGrid gives the cartesian product in a stable order: axes in the order given, values in
//    the order given, the last axis varying fastest.
//  - A point's name is its settings in axis order joined by '-': each is the key followed by the
//    value, with '_' between them when the value does not start with a digit
//    ("batch32-world2-topology_ring"). In keys and values every character other than A-Z a-z 0-9
//    '.' '+' becomes '_' (so "binary-tree-star" is "binary_tree_star"); `gpus` is named `world`.
//    Two points that would share a name are refused.
//  - A value listed twice is refused; so are two values of a numeric key that are the same number
//    ("lr=0.1,0.10", "batch=32,032"): world, nodes and batch here, other keys by checkNumericAxis,
//    whose caller knows which train flags take numbers.
//  - A point's world is at most 1,000,000 ranks (nodes × ranks per node included).
// Every violation throws common::UsageError with a message that says what to fix.

#include <string>
#include <utility>
#include <vector>

namespace dtbench::sweep {

struct GridAxis {
  std::string key;  // canonical: "world", "batch" or the train flag's name
  std::vector<std::string> values;
  std::string where;  // where it was given, for messages: "--grid" or "FILE:LINE"
};

struct Grid {
  std::vector<GridAxis> axes;
};

struct GridPoint {
  std::vector<std::pair<std::string, std::string>> settings;  // (canonical key, value), axis order
  int worldSize = 1;      // processes (ranks)
  int processGpus = 0;    // mode dp: the GPUs its one process drives (the world value, else 1); 0 otherwise
  int nodes = 0;  // the nodes axis' value; 0 without a nodes axis (the launcher places the ranks)
  std::string name;
  std::vector<std::string> trainFlags;  // what the point adds to `dtbench train`: --batch-size 32 ...
};

// Parses "KEY=V1,V2,..." into an axis with its canonical key. `where` prefixes messages
// (e.g. "--grid" or "grid.txt:3").
GridAxis parseGridAxis(const std::string& text, const std::string& where = "--grid");

// Parses a grid file's text (one axis per line, '#' comments); `path` names it in messages.
std::vector<GridAxis> parseGridText(const std::string& text, const std::string& path);

// Reads and parses a grid file; UsageError naming the path when it cannot be read.
std::vector<GridAxis> readGridFile(const std::string& path);

// Appends an axis; refuses a key already in the grid (aliases count as their canonical key) and
// `world` beside `nodes` (in either order).
void addAxis(Grid& grid, GridAxis axis);

// True when the grid has an axis with canonical key `key`.
bool hasAxis(const Grid& grid, const std::string& key);

// The points of a non-empty grid, in the stable order above, named; with a nodes axis each point's
// world is nodes × `ranksPerNode`. Refuses an empty grid, names shared by two points,
// `ranksPerNode` < 1, and a world above 1,000,000 ranks.
std::vector<GridPoint> expandGrid(const Grid& grid, int ranksPerNode = 1);

// For --launcher local, which starts every rank on this machine: refuses a nodes value above 1
// (one machine cannot place ranks on several nodes), saying to use the Slurm launcher.
void checkLocalPlacement(const Grid& grid);

// The name of a point with these settings (see the contract above).
std::string pointName(const std::vector<std::pair<std::string, std::string>>& settings);

// For a key whose train flag takes a number (whole numbers with `wholeNumbers`): refuses a value
// that is not a finite number (or not whole), and two values that are the same number.
void checkNumericAxis(const GridAxis& axis, bool wholeNumbers);

// Refuses train flags (the words after `--`) that the sweep controls: --out, --rank, --world-size,
// --resume, and the flag of every grid key (e.g. --batch-size when `batch` is a key).
void checkTrainFlags(const Grid& grid, const std::vector<std::string>& trainFlags);

}  // namespace dtbench::sweep
