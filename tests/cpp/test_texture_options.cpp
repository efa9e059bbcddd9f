// Texture and surface memory without a GPU: how array descriptors, texture
// options and texture resources become the driver's structs, and what each
// refuses before any driver call.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "cubind/texture.hpp"
#include "test_helpers.hpp"

namespace {

using cubind::ArrayDescriptor;
using cubind::TextureOptions;
using cubind::TextureReadMode;
using cubind::TextureResource;
using cubind_test::message_of;

ArrayDescriptor descriptor(std::size_t w, std::size_t h, std::size_t d, CUarray_format f, unsigned c) {
  ArrayDescriptor out;
  out.width = w;
  out.height = h;
  out.depth = d;
  out.format = f;
  out.num_channels = c;
  return out;
}

TEST(ArrayFormatBytes, EachFormatHasItsWidth) {
  EXPECT_EQ(cubind::array_format_bytes(CU_AD_FORMAT_UNSIGNED_INT8), 1u);
  EXPECT_EQ(cubind::array_format_bytes(CU_AD_FORMAT_SIGNED_INT8), 1u);
  EXPECT_EQ(cubind::array_format_bytes(CU_AD_FORMAT_HALF), 2u);
  EXPECT_EQ(cubind::array_format_bytes(CU_AD_FORMAT_SIGNED_INT16), 2u);
  EXPECT_EQ(cubind::array_format_bytes(CU_AD_FORMAT_UNSIGNED_INT32), 4u);
  EXPECT_EQ(cubind::array_format_bytes(CU_AD_FORMAT_FLOAT), 4u);
  const std::string message =
      message_of<std::invalid_argument>([] { cubind::array_format_bytes(CU_AD_FORMAT_BC1_UNORM); });
  EXPECT_NE(message.find("format"), std::string::npos) << message;
}

TEST(ArrayDescriptor, RankAndSizesFollowTheExtents) {
  const ArrayDescriptor one = descriptor(16, 0, 0, CU_AD_FORMAT_FLOAT, 1);
  EXPECT_EQ(one.rank(), 1);
  EXPECT_EQ(one.size_bytes(), 64u);
  const ArrayDescriptor two = descriptor(8, 4, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4);
  EXPECT_EQ(two.rank(), 2);
  EXPECT_EQ(two.element_bytes(), 4u);
  EXPECT_EQ(two.size_bytes(), 8u * 4 * 4);
  const ArrayDescriptor three = descriptor(4, 3, 2, CU_AD_FORMAT_HALF, 2);
  EXPECT_EQ(three.rank(), 3);
  EXPECT_EQ(three.size_bytes(), 4u * 3 * 2 * 4);
}

TEST(ArrayDescriptor, ToNativeCarriesEveryFieldAndTheSurfaceFlag) {
  ArrayDescriptor d = descriptor(32, 16, 0, CU_AD_FORMAT_SIGNED_INT16, 2);
  d.surface_load_store = true;
  const CUDA_ARRAY3D_DESCRIPTOR native = cubind::to_native(d);
  EXPECT_EQ(native.Width, 32u);
  EXPECT_EQ(native.Height, 16u);
  EXPECT_EQ(native.Depth, 0u);
  EXPECT_EQ(native.Format, CU_AD_FORMAT_SIGNED_INT16);
  EXPECT_EQ(native.NumChannels, 2u);
  EXPECT_EQ(native.Flags, static_cast<unsigned>(CUDA_ARRAY3D_SURFACE_LDST));
  const ArrayDescriptor back = cubind::from_native(native);
  EXPECT_EQ(back.width, 32u);
  EXPECT_EQ(back.height, 16u);
  EXPECT_EQ(back.num_channels, 2u);
  EXPECT_TRUE(back.surface_load_store);
}

TEST(ArrayDescriptor, ToNativeRefusesWhatTheDriverWouldNamingTheField) {
  std::string message = message_of<std::invalid_argument>(
      [] { cubind::to_native(descriptor(0, 4, 0, CU_AD_FORMAT_FLOAT, 1)); });
  EXPECT_NE(message.find("width must be >= 1"), std::string::npos) << message;
  message = message_of<std::invalid_argument>([] { cubind::to_native(descriptor(4, 4, 0, CU_AD_FORMAT_FLOAT, 3)); });
  EXPECT_NE(message.find("num_channels must be 1, 2, or 4, got 3"), std::string::npos) << message;
  message = message_of<std::invalid_argument>([] { cubind::to_native(descriptor(4, 0, 2, CU_AD_FORMAT_FLOAT, 1)); });
  EXPECT_NE(message.find("needs a height"), std::string::npos) << message;
}

TEST(TextureOptions, DefaultsReadElementsClampedWithPointSampling) {
  const CUDA_TEXTURE_DESC desc = cubind::to_native(TextureOptions{});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(desc.addressMode[i], CU_TR_ADDRESS_MODE_CLAMP);
  EXPECT_EQ(desc.filterMode, CU_TR_FILTER_MODE_POINT);
  EXPECT_EQ(desc.flags, static_cast<unsigned>(CU_TRSF_READ_AS_INTEGER));
  EXPECT_EQ(desc.maxAnisotropy, 0u);
  EXPECT_EQ(desc.borderColor[3], 0.0f);
}

TEST(TextureOptions, EveryFieldReachesTheDescriptor) {
  TextureOptions options;
  options.address_mode = {CU_TR_ADDRESS_MODE_WRAP, CU_TR_ADDRESS_MODE_MIRROR, CU_TR_ADDRESS_MODE_BORDER};
  options.filter_mode = CU_TR_FILTER_MODE_LINEAR;
  options.read_mode = TextureReadMode::normalized_float;
  options.normalized_coords = true;
  options.srgb = true;
  options.disable_trilinear_optimization = true;
  options.seamless_cubemap = true;
  options.max_anisotropy = 8;
  options.mipmap_filter_mode = CU_TR_FILTER_MODE_LINEAR;
  options.mipmap_level_bias = 0.5f;
  options.min_mipmap_level_clamp = 1.0f;
  options.max_mipmap_level_clamp = 3.0f;
  options.border_color = {0.25f, 0.5f, 0.75f, 1.0f};
  const CUDA_TEXTURE_DESC desc = cubind::to_native(options);
  EXPECT_EQ(desc.addressMode[0], CU_TR_ADDRESS_MODE_WRAP);
  EXPECT_EQ(desc.addressMode[1], CU_TR_ADDRESS_MODE_MIRROR);
  EXPECT_EQ(desc.addressMode[2], CU_TR_ADDRESS_MODE_BORDER);
  EXPECT_EQ(desc.filterMode, CU_TR_FILTER_MODE_LINEAR);
  EXPECT_EQ(desc.flags, static_cast<unsigned>(CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SRGB |
                                              CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION | CU_TRSF_SEAMLESS_CUBEMAP));
  EXPECT_EQ(desc.maxAnisotropy, 8u);
  EXPECT_EQ(desc.mipmapFilterMode, CU_TR_FILTER_MODE_LINEAR);
  EXPECT_EQ(desc.mipmapLevelBias, 0.5f);
  EXPECT_EQ(desc.minMipmapLevelClamp, 1.0f);
  EXPECT_EQ(desc.maxMipmapLevelClamp, 3.0f);
  EXPECT_EQ(desc.borderColor[1], 0.5f);
}

TEST(TextureResource, LinearAndPitchedMemoryAreDescribedAsGiven) {
  const TextureResource linear = TextureResource::linear(0x1000, CU_AD_FORMAT_FLOAT, 2, 64);
  EXPECT_EQ(linear.type(), CU_RESOURCE_TYPE_LINEAR);
  EXPECT_EQ(linear.native().res.linear.devPtr, 0x1000u);
  EXPECT_EQ(linear.native().res.linear.numChannels, 2u);
  EXPECT_EQ(linear.native().res.linear.sizeInBytes, 64u);
  EXPECT_EQ(linear.array(), nullptr);
  const TextureResource pitched = TextureResource::pitch2d(0x2000, CU_AD_FORMAT_UNSIGNED_INT8, 4, 8, 3, 64);
  EXPECT_EQ(pitched.type(), CU_RESOURCE_TYPE_PITCH2D);
  EXPECT_EQ(pitched.native().res.pitch2D.width, 8u);
  EXPECT_EQ(pitched.native().res.pitch2D.height, 3u);
  EXPECT_EQ(pitched.native().res.pitch2D.pitchInBytes, 64u);
}

TEST(TextureResource, LinearMemoryMustHoldWholeElements) {
  std::string message = message_of<std::invalid_argument>(
      [] { TextureResource::linear(0x1000, CU_AD_FORMAT_FLOAT, 1, 6); });
  EXPECT_NE(message.find("size_bytes (6)"), std::string::npos) << message;
  message = message_of<std::invalid_argument>([] { TextureResource::linear(0x1000, CU_AD_FORMAT_FLOAT, 1, 0); });
  EXPECT_NE(message.find("size_bytes (0)"), std::string::npos) << message;
  message = message_of<std::invalid_argument>([] { TextureResource::linear(0x1000, CU_AD_FORMAT_FLOAT, 3, 12); });
  EXPECT_NE(message.find("num_channels"), std::string::npos) << message;
}

TEST(TextureResource, APitchBelowARowOrAnEmptyImageIsRefused) {
  std::string message = message_of<std::invalid_argument>(
      [] { TextureResource::pitch2d(0x1000, CU_AD_FORMAT_FLOAT, 1, 16, 2, 32); });
  EXPECT_NE(message.find("pitch_bytes (32) must be >= width * element_bytes (64)"), std::string::npos) << message;
  message = message_of<std::invalid_argument>(
      [] { TextureResource::pitch2d(0x1000, CU_AD_FORMAT_FLOAT, 1, 16, 0, 64); });
  EXPECT_NE(message.find("height must be >= 1"), std::string::npos) << message;
}

TEST(TextureResource, ANullArrayIsRefused) {
  const std::string message = message_of<std::invalid_argument>([] { TextureResource::array(nullptr); });
  EXPECT_NE(message.find("null"), std::string::npos) << message;
  EXPECT_THROW(TextureResource::mipmapped_array(nullptr), std::invalid_argument);
  EXPECT_THROW(cubind::MipmappedArray::level(std::shared_ptr<const cubind::MipmappedArray>(), 0),
               std::invalid_argument);
}

TEST(ArrayRef, AViewDescribesTheArrayItWasGiven) {
  const ArrayDescriptor d = descriptor(4, 2, 0, CU_AD_FORMAT_FLOAT, 1);
  const cubind::ArrayRef view(reinterpret_cast<CUarray>(0x10), d);
  EXPECT_EQ(view.handle(), reinterpret_cast<CUarray>(0x10));
  EXPECT_EQ(view.descriptor().size_bytes(), 32u);
  EXPECT_THROW(cubind::ArrayRef::from_native_handle(nullptr), std::invalid_argument);
}

}  // namespace
