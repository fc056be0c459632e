#pragma once
// Catch2 for the test files that use LibTorch. LibTorch's c10/util/Logging.h defines glog's
// CHECK(condition); it comes first here, so that Catch2's CHECK, defined after it, is the one every
// test uses, whatever order the file's other includes come in, with or without the precompiled
// header (which puts LibTorch before everything; a build without it does not).
#include <c10/util/Logging.h>

#include <catch2/catch.hpp>
