// main() of cubind_gpu_tests. Run as `cubind_gpu_tests --cubind-ipc-child FD`
// it is the second process of the IPC test instead: a fresh exec, because a
// forked child cannot use the CUDA state its parent initialized.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "test_helpers.hpp"

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--cubind-ipc-child") == 0) {
    return cubind_test::ipc_child_main(std::atoi(argv[2]));
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
