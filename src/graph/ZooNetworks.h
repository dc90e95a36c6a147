/// The model zoo's network families (internal to the zoo; ModelZoo.h is the entry point), one
/// source file each. Each builds the network for checked options (batch >= 1).
#pragma once
#include "graph/ModelZoo.h"

namespace tessel::graph::zoo {

/// torchvision resnet18..152 (depth 18, 34, 50, 101, 152).
Graph resnet(int depth, const ModelOptions& options);
/// MobileNet v1 1.0 (Gluon's mobilenet1.0).
Graph mobilenetV1(const ModelOptions& options);
/// torchvision mobilenet_v2 (width 1.0).
Graph mobilenetV2(const ModelOptions& options);
/// torchvision vgg11/13/16/19 without batch norm (depth 11, 13, 16, 19).
Graph vgg(int depth, const ModelOptions& options);
/// torchvision squeezenet1_0 ("1.0") and squeezenet1_1 ("1.1").
Graph squeezenet(const std::string& version, const ModelOptions& options);
/// torchvision inception_v3 in eval mode: no auxiliary classifier, transform_input=False.
Graph inceptionV3(const ModelOptions& options);

/// BERT-base (transformers' BertModel: post-norm encoder, erf GELU; the last hidden state).
Graph bertBase(const ModelOptions& options);
/// GPT-2 small (transformers' GPT2Model: pre-norm decoder, causal attention, tanh GELU; the last
/// hidden state, no language-model head, no KV cache).
Graph gpt2Small(const ModelOptions& options);
/// ViT-B/16 (Dosovitskiy et al. 2021: 16x16 patches, class token, pre-norm encoder; the logits).
Graph vitB16(const ModelOptions& options);

/// The input size: options.imageSize or the network's default; an error below `minimum`.
int64_t imageSize(const std::string& network, const ModelOptions& options, int64_t defaultSize, int64_t minimum);

}  // namespace tessel::graph::zoo
