#include "OneDnnConv.h"

#include <dnnl.hpp>

namespace tessel::bench {

struct OneDnnConv2d::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::convolution_forward conv;
  dnnl::memory src, weights, dst;
};

OneDnnConv2d::OneDnnConv2d(const Conv2dShape& s, const float* data, const float* weight, float* output)
    : impl_(std::make_unique<Impl>()) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  dnnl::memory::dims srcDims = {s.batch, s.inChannels, s.height, s.width};
  dnnl::memory::dims weightDims = {s.outChannels, s.inChannels, s.kernel, s.kernel};
  dnnl::memory::dims dstDims = {s.batch, s.outChannels, s.outHeight(), s.outWidth()};
  dnnl::memory::desc srcMd(srcDims, dt::f32, tag::nhwc), dstMd(dstDims, dt::f32, tag::nhwc);
  dnnl::memory::desc anyWeightMd(weightDims, dt::f32, tag::any);
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, srcMd,
                                       anyWeightMd, dstMd, {s.stride, s.stride}, {s.pad, s.pad}, {s.pad, s.pad});
  dnnl::convolution_forward::primitive_desc pd(desc, impl_->engine);
  impl_->conv = dnnl::convolution_forward(pd);
  impl_->src = dnnl::memory(srcMd, impl_->engine, const_cast<float*>(data));
  impl_->dst = dnnl::memory(dstMd, impl_->engine, output);
  dnnl::memory userWeights({weightDims, dt::f32, tag::hwio}, impl_->engine, const_cast<float*>(weight));
  impl_->weights = dnnl::memory(pd.weights_desc(), impl_->engine);
  dnnl::reorder(userWeights, impl_->weights).execute(impl_->stream, userWeights, impl_->weights);
  impl_->stream.wait();
}

OneDnnConv2d::~OneDnnConv2d() = default;

void OneDnnConv2d::run() {
  impl_->conv.execute(impl_->stream,
                      {{DNNL_ARG_SRC, impl_->src}, {DNNL_ARG_WEIGHTS, impl_->weights}, {DNNL_ARG_DST, impl_->dst}});
  impl_->stream.wait();
}

}  // namespace tessel::bench
