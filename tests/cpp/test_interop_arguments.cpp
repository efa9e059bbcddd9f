// Checkpointing and OpenGL interop without a GPU: the arguments refused before
// any driver call (a pid, registration flags, a UUID's text), the names of the
// process states, and a GraphicsResource's null state and ownership. Adopted
// handles are fake and released before destruction, so no driver sees them.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "cubind/checkpoint.hpp"
#include "cubind/error.hpp"
#include "cubind/graphics_resource.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::GraphicsMapFlags;
using cubind::GraphicsRegisterFlags;
using cubind::GraphicsResource;
using cubind::StreamRef;
using cubind::checkpoint::ProcessState;
using cubind_test::message_of;

CUgraphicsResource fake_resource(std::uintptr_t value) { return reinterpret_cast<CUgraphicsResource>(value); }

TEST(Checkpoint, APidMustBePositive) {
  for (int pid : {0, -1, -12345}) {
    const std::string message = message_of<std::invalid_argument>([&] { cubind::checkpoint::Process p(pid); });
    EXPECT_NE(message.find("pid is " + std::to_string(pid)), std::string::npos) << message;
  }
  EXPECT_EQ(cubind::checkpoint::Process(42).pid(), 42);
}

TEST(Checkpoint, ARefusalNamesTheOperationAndThePid) {
  const cubind::CudaError error(800, "cuCheckpointProcessLock", "CUDA_ERROR_NOT_PERMITTED", "operation not permitted",
                                "Process(pid=7).lock");
  EXPECT_STREQ(error.what(),
               "Process(pid=7).lock: cuCheckpointProcessLock failed: CUDA_ERROR_NOT_PERMITTED (800): operation not "
               "permitted");
  EXPECT_EQ(error.api_function(), "cuCheckpointProcessLock");
  EXPECT_EQ(error.status(), 800);
}

TEST(Checkpoint, StatesHaveCudaCoresNames) {
  EXPECT_STREQ(to_string(ProcessState::running), "running");
  EXPECT_STREQ(to_string(ProcessState::locked), "locked");
  EXPECT_STREQ(to_string(ProcessState::checkpointed), "checkpointed");
  EXPECT_STREQ(to_string(ProcessState::failed), "failed");
  EXPECT_EQ(to_string(static_cast<ProcessState>(99)), nullptr);
  EXPECT_EQ(static_cast<int>(ProcessState::checkpointed), CU_PROCESS_STATE_CHECKPOINTED);
}

TEST(Checkpoint, UuidTextParsesWithOrWithoutHyphensAndPrefix) {
  const CUuuid a = cubind::checkpoint::parse_uuid("00112233-4455-6677-8899-aabbccddeeff");
  const CUuuid b = cubind::checkpoint::parse_uuid("GPU-00112233445566778899AABBCCDDEEFF");
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(static_cast<unsigned char>(a.bytes[i]), 0x11 * i) << i;
    EXPECT_EQ(a.bytes[i], b.bytes[i]) << i;
  }
  for (const char* bad :
       {"", "0011", "00112233-4455-6677-8899-aabbccddeeffaa", "zz112233-4455-6677-8899-aabbccddeeff"}) {
    const std::string message =
        message_of<std::invalid_argument>([&] { cubind::checkpoint::parse_uuid(bad); });
    EXPECT_NE(message.find("32 hex characters"), std::string::npos) << message;
    EXPECT_NE(message.find(std::string("'") + bad + "'"), std::string::npos) << message;
  }
}

TEST(GraphicsResource, IsAMoveOnlyOwner) {
  static_assert(!std::is_copy_constructible_v<GraphicsResource>);
  static_assert(!std::is_copy_assignable_v<GraphicsResource>);
  static_assert(std::is_nothrow_move_constructible_v<GraphicsResource>);
  static_assert(std::is_nothrow_move_assignable_v<GraphicsResource>);
  static_assert(GraphicsRegisterFlags::all == 0xf);
  static_assert(static_cast<unsigned>(GraphicsMapFlags::write_discard) == CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD);
}

TEST(GraphicsResource, UnknownRegisterFlagsAreRefusedBeforeTheDriver) {
  std::string message =
      message_of<std::invalid_argument>([] { GraphicsResource::register_gl_buffer(1, 0x10); });
  EXPECT_NE(message.find("register_gl_buffer: flags is 16"), std::string::npos) << message;
  message = message_of<std::invalid_argument>([] { GraphicsResource::register_gl_image(1, 0x0DE1, 0xff); });
  EXPECT_NE(message.find("register_gl_image: flags is 255"), std::string::npos) << message;
  message = message_of<std::invalid_argument>([] { GraphicsResource::from_native_handle(nullptr); });
  EXPECT_NE(message.find("null"), std::string::npos) << message;
}

TEST(GraphicsResource, ANullResourceRefusesEveryUseButClose) {
  GraphicsResource null;
  EXPECT_EQ(null.handle(), nullptr);
  EXPECT_FALSE(null);
  EXPECT_FALSE(null.is_mapped());
  null.close();  // nothing to do
  const StreamRef stream = StreamRef::legacy_default();
  for (auto [call, name] : std::initializer_list<std::pair<std::function<void()>, const char*>>{
           {[&] { null.map(stream); }, "map"},
           {[&] { (void)null.map_buffer(stream); }, "map"},
           {[&] { null.unmap(stream); }, "unmap"},
           {[&] { null.unmap(); }, "unmap"},
           {[&] { (void)null.mapped_pointer(); }, "mapped_pointer"},
           {[&] { (void)null.mapped_array(); }, "mapped_array"},
           {[&] { (void)null.mapped_mipmapped_array(); }, "mapped_mipmapped_array"},
           {[&] { null.set_map_flags(GraphicsMapFlags::read_only); }, "set_map_flags"},
           {[&] { (void)null.release(); }, "release"},
       }) {
    const std::string message = message_of<std::logic_error>(call);
    EXPECT_NE(message.find(std::string("cubind::GraphicsResource::") + name), std::string::npos) << message;
    EXPECT_NE(message.find("is null"), std::string::npos) << message;
  }
}

TEST(GraphicsResource, AnUnmappedResourceRefusesWhatNeedsAMapping) {
  GraphicsResource resource = GraphicsResource::from_native_handle(fake_resource(0x1230));
  EXPECT_EQ(resource.handle(), fake_resource(0x1230));
  EXPECT_FALSE(resource.is_mapped());
  std::string message = message_of<std::logic_error>([&] { (void)resource.mapped_pointer(); });
  EXPECT_NE(message.find("not mapped"), std::string::npos) << message;
  message = message_of<std::logic_error>([&] { (void)resource.mapped_array(0, 0); });
  EXPECT_NE(message.find("not mapped"), std::string::npos) << message;
  message = message_of<std::logic_error>([&] { resource.unmap(); });
  EXPECT_NE(message.find("not mapped"), std::string::npos) << message;

  GraphicsResource moved = std::move(resource);
  EXPECT_EQ(resource.handle(), nullptr);  // NOLINT: the moved-from state is the point
  EXPECT_EQ(moved.release(), fake_resource(0x1230));
  EXPECT_EQ(moved.handle(), nullptr);
}

}  // namespace
