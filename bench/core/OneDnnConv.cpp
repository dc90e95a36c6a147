#include "OneDnnConv.h"

#include <dnnl.hpp>
#include <stdexcept>
#include <unordered_map>

namespace tessel::bench {

struct OneDnnConv2d::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::convolution_forward conv;
  dnnl::memory src, weights, dst, bias;
};

OneDnnConv2d::OneDnnConv2d(const Conv2dShape& s, const float* data, const float* weight, float* output, const ConvEpilogue& epilogue,
                           const float* bias)
    : impl_(std::make_unique<Impl>()) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  dnnl::memory::dims srcDims = {s.batch, s.inChannels, s.height, s.width};
  dnnl::memory::dims weightDims = {s.outChannels, s.inChannels, s.kernel, s.kernel};
  dnnl::memory::dims dstDims = {s.batch, s.outChannels, s.outHeight(), s.outWidth()};
  dnnl::memory::desc srcMd(srcDims, dt::f32, tag::nhwc), dstMd(dstDims, dt::f32, tag::nhwc);
  dnnl::memory::desc anyWeightMd(weightDims, dt::f32, tag::any), biasMd({s.outChannels}, dt::f32, tag::x);
  auto prop = dnnl::prop_kind::forward_inference;
  auto algorithm = dnnl::algorithm::convolution_direct;
  dnnl::memory::dims strides = {s.stride, s.stride}, padding = {s.pad, s.pad};
  auto desc = epilogue.bias ? dnnl::convolution_forward::desc(prop, algorithm, srcMd, anyWeightMd, biasMd, dstMd, strides, padding, padding)
                            : dnnl::convolution_forward::desc(prop, algorithm, srcMd, anyWeightMd, dstMd, strides, padding, padding);
  dnnl::post_ops postOps;
  if (epilogue.residual) postOps.append_sum(1.0f);
  if (epilogue.relu) postOps.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  dnnl::primitive_attr attributes;
  attributes.set_post_ops(postOps);
  dnnl::convolution_forward::primitive_desc pd(desc, attributes, impl_->engine);
  impl_->conv = dnnl::convolution_forward(pd);
  impl_->src = dnnl::memory(srcMd, impl_->engine, const_cast<float*>(data));
  impl_->dst = dnnl::memory(dstMd, impl_->engine, output);
  if (epilogue.bias) {
    if (!bias) throw std::invalid_argument("OneDnnConv2d: the epilogue has a bias and no bias buffer was given");
    impl_->bias = dnnl::memory(biasMd, impl_->engine, const_cast<float*>(bias));
  }
  dnnl::memory userWeights({weightDims, dt::f32, tag::hwio}, impl_->engine, const_cast<float*>(weight));
  impl_->weights = dnnl::memory(pd.weights_desc(), impl_->engine);
  dnnl::reorder(userWeights, impl_->weights).execute(impl_->stream, userWeights, impl_->weights);
  impl_->stream.wait();
}

OneDnnConv2d::~OneDnnConv2d() = default;

void OneDnnConv2d::run() {
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, impl_->src}, {DNNL_ARG_WEIGHTS, impl_->weights}, {DNNL_ARG_DST, impl_->dst}};
  if (impl_->bias) args.emplace(DNNL_ARG_BIAS, impl_->bias);
  impl_->conv.execute(impl_->stream, args);
  impl_->stream.wait();
}

}  // namespace tessel::bench
