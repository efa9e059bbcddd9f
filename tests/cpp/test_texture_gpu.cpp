// Texture and surface memory on a real GPU: whole-array copies round-trip in
// 1, 2 and 3 dimensions, from host memory and from device buffers; mipmap
// levels halve; texture and surface objects keep their arrays alive; a
// surface needs an array made for surface loads and stores.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "cubind/buffer.hpp"
#include "cubind/device.hpp"
#include "cubind/memory_resource.hpp"
#include "cubind/stream.hpp"
#include "cubind/texture.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::ArrayDescriptor;
using cubind::ArrayRef;
using cubind::MipmappedArray;
using cubind::OpaqueArray;
using cubind::Stream;
using cubind::SurfaceObject;
using cubind::TextureObject;
using cubind::TextureResource;
using cubind_test::message_of;

class TextureGpuTest : public cubind_test::DeviceTest {};

ArrayDescriptor descriptor(std::size_t w, std::size_t h, std::size_t d, CUarray_format f, unsigned c,
                           bool surface = false) {
  ArrayDescriptor out;
  out.width = w;
  out.height = h;
  out.depth = d;
  out.format = f;
  out.num_channels = c;
  out.surface_load_store = surface;
  return out;
}

TEST_F(TextureGpuTest, HostDataRoundTripsThroughArraysOfEachRank) {
  Stream stream(dev());
  for (const ArrayDescriptor& d : {descriptor(37, 0, 0, CU_AD_FORMAT_FLOAT, 1),
                                   descriptor(13, 7, 0, CU_AD_FORMAT_UNSIGNED_INT16, 2),
                                   descriptor(5, 4, 3, CU_AD_FORMAT_UNSIGNED_INT8, 4)}) {
    OpaqueArray array(dev(), d);
    ASSERT_NE(array.handle(), nullptr);
    std::vector<std::uint8_t> in(d.size_bytes());
    std::iota(in.begin(), in.end(), static_cast<std::uint8_t>(d.rank()));
    std::vector<std::uint8_t> out(in.size(), 0);
    array.copy_from_host(in.data(), in.size(), stream);
    array.copy_to_host(out.data(), out.size(), stream);
    stream.sync();
    EXPECT_EQ(out, in) << "rank " << d.rank();
  }
}

TEST_F(TextureGpuTest, DeviceBuffersRoundTripThroughAnArray) {
  Stream stream(dev());
  OpaqueArray array(dev(), descriptor(16, 8, 0, CU_AD_FORMAT_SIGNED_INT32, 1));
  const std::size_t bytes = array.descriptor().size_bytes();
  auto pool = std::make_shared<cubind::DeviceMemoryResource>(dev());
  cubind::Buffer src = cubind::Buffer::allocate(pool, bytes, stream);
  cubind::Buffer dst = cubind::Buffer::allocate(pool, bytes, stream);
  std::vector<std::int32_t> in(16 * 8);
  std::iota(in.begin(), in.end(), -40);
  src.copy_from(in.data(), bytes, stream);
  dst.fill(std::uint8_t{0}, stream);
  array.copy_from(src.handle(), bytes, stream);
  array.copy_to(dst.handle(), bytes, stream);
  std::vector<std::int32_t> out(in.size(), 7);
  dst.copy_to(out.data(), bytes, stream);
  stream.sync();
  EXPECT_EQ(out, in);
}

TEST_F(TextureGpuTest, ACopyFromTooSmallASourceIsRefusedBeforeTheDriver) {
  Stream stream(dev());
  OpaqueArray array(dev(), descriptor(16, 0, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1));
  std::vector<std::uint32_t> small(8);
  const std::string message =
      message_of<std::invalid_argument>([&] { array.copy_from_host(small.data(), 32, stream); });
  EXPECT_NE(message.find("smaller than the array extent (64 bytes)"), std::string::npos) << message;
}

TEST_F(TextureGpuTest, MipmapLevelsHalveAndOutliveTheirParentsShare) {
  auto mipmap = std::make_shared<MipmappedArray>(dev(), descriptor(64, 32, 0, CU_AD_FORMAT_FLOAT, 1), 4);
  EXPECT_EQ(mipmap->num_levels(), 4u);
  for (unsigned level = 0; level < 4; ++level) {
    const ArrayRef view = mipmap->level(level);
    EXPECT_EQ(view.descriptor().width, std::size_t{64} >> level);
    EXPECT_EQ(view.descriptor().height, std::size_t{32} >> level);
  }
  EXPECT_THROW(mipmap->level(4), std::out_of_range);
  std::shared_ptr<const ArrayRef> level2 = MipmappedArray::level(mipmap, 2);
  mipmap.reset();
  Stream stream(dev());
  std::vector<float> in(16 * 8);
  std::iota(in.begin(), in.end(), 0.5f);
  std::vector<float> out(in.size(), 0.0f);
  level2->copy_from_host(in.data(), in.size() * sizeof(float), stream);
  level2->copy_to_host(out.data(), out.size() * sizeof(float), stream);
  stream.sync();
  EXPECT_EQ(out, in);
}

TEST_F(TextureGpuTest, ATextureObjectKeepsItsArrayAlive) {
  auto array = std::make_shared<OpaqueArray>(dev(), descriptor(8, 8, 0, CU_AD_FORMAT_FLOAT, 1));
  TextureObject texture(dev(), TextureResource::array(array));
  EXPECT_NE(texture.handle(), 0u);
  const CUarray handle = array->handle();
  array.reset();
  ASSERT_NE(texture.resource().array(), nullptr);
  EXPECT_EQ(texture.resource().array()->handle(), handle);
  Stream stream(dev());
  std::vector<float> in(64, 2.5f);
  texture.resource().array()->copy_from_host(in.data(), in.size() * sizeof(float), stream);
  stream.sync();
  TextureObject moved(std::move(texture));
  EXPECT_EQ(texture.handle(), 0u);
  EXPECT_NE(moved.handle(), 0u);
}

TEST_F(TextureGpuTest, TexturesOfEveryResourceKindAreCreated) {
  auto mipmap = std::make_shared<MipmappedArray>(dev(), descriptor(32, 32, 0, CU_AD_FORMAT_FLOAT, 1), 3);
  cubind::TextureOptions options;
  options.filter_mode = CU_TR_FILTER_MODE_LINEAR;
  options.mipmap_filter_mode = CU_TR_FILTER_MODE_LINEAR;
  options.normalized_coords = true;
  options.max_mipmap_level_clamp = 2.0f;
  TextureObject mipmapped(dev(), TextureResource::mipmapped_array(mipmap), options);
  EXPECT_NE(mipmapped.handle(), 0u);
  Stream stream(dev());
  auto pool = std::make_shared<cubind::DeviceMemoryResource>(dev());
  // The driver wants linear memory aligned to CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT.
  const auto alignment = static_cast<CUdeviceptr>(dev().attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT));
  cubind::Buffer linear_memory = cubind::Buffer::allocate(pool, 4096 + alignment, stream);
  const CUdeviceptr aligned = (linear_memory.handle() + alignment - 1) / alignment * alignment;
  TextureObject linear(dev(), TextureResource::linear(aligned, CU_AD_FORMAT_FLOAT, 1, 4096));
  EXPECT_NE(linear.handle(), 0u);
  const std::size_t pitch = static_cast<std::size_t>(dev().attribute(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT));
  const std::size_t row = pitch < 128 ? 128 : pitch;
  TextureObject pitched(dev(), TextureResource::pitch2d(aligned, CU_AD_FORMAT_UNSIGNED_INT8, 4, 32, 4096 / row, row));
  EXPECT_NE(pitched.handle(), 0u);
  stream.sync();
}

TEST_F(TextureGpuTest, ASurfaceNeedsAnArrayMadeForIt) {
  auto plain = std::make_shared<OpaqueArray>(dev(), descriptor(8, 8, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4));
  const std::string message = message_of<std::invalid_argument>([&] { SurfaceObject(dev(), plain); });
  EXPECT_NE(message.find("is_surface_load_store=True"), std::string::npos) << message;
  auto writable = std::make_shared<OpaqueArray>(dev(), descriptor(8, 8, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4, true));
  SurfaceObject surface(dev(), writable);
  EXPECT_NE(surface.handle(), 0u);
  writable.reset();
  EXPECT_NE(surface.array()->handle(), nullptr);
}

TEST_F(TextureGpuTest, AnAdoptedArrayIsDescribedByTheDriver) {
  OpaqueArray made(dev(), descriptor(12, 5, 3, CU_AD_FORMAT_HALF, 2, true));
  const CUarray handle = made.release();
  OpaqueArray adopted = OpaqueArray::from_native_handle(handle);
  EXPECT_EQ(adopted.descriptor().width, 12u);
  EXPECT_EQ(adopted.descriptor().height, 5u);
  EXPECT_EQ(adopted.descriptor().depth, 3u);
  EXPECT_EQ(adopted.descriptor().format, CU_AD_FORMAT_HALF);
  EXPECT_EQ(adopted.descriptor().num_channels, 2u);
  EXPECT_TRUE(adopted.descriptor().surface_load_store);
}

}  // namespace
