// The Perfetto trace format as opscope writes and reads it: the field numbers of the TracePacket
// messages both sides use (from Perfetto's perfetto_trace.proto, looked up there, not generated),
// and the names opscope reserves inside a trace for what its model holds that Perfetto has no field
// for. One table shared by the exporter (src/profiler/perfetto_writer.cc) and the reader
// (src/import/perfetto/), so the two cannot drift apart. docs/formats.md describes the encoding.
#ifndef OPSCOPE_TRACE_PERFETTO_PROTOS_H_
#define OPSCOPE_TRACE_PERFETTO_PROTOS_H_

#include <cstdint>
#include <string_view>

namespace opscope::perfetto {

// message Trace
namespace trace {
inline constexpr uint32_t kPacket = 1;  // repeated TracePacket
}  // namespace trace

// message TracePacket
namespace packet {
inline constexpr uint32_t kTimestamp = 8;
inline constexpr uint32_t kTimestampClockId = 58;
inline constexpr uint32_t kTrackEvent = 11;
inline constexpr uint32_t kTrackDescriptor = 60;
inline constexpr uint32_t kChromeEvents = 5;  // ChromeEventBundle
inline constexpr uint32_t kClockSnapshot = 6;
inline constexpr uint32_t kTrackEventRangeOfInterest = 90;
inline constexpr uint32_t kProcessDescriptor = 43;
inline constexpr uint32_t kThreadDescriptor = 44;
inline constexpr uint32_t kStreamingProfilePacket = 54;  // its timestamp_delta_us (field 2)
inline constexpr uint32_t kCompressedPackets = 50;       // zlib of a Trace message
inline constexpr uint32_t kZstdCompressedPackets = 133;  // zstd of a Trace message
inline constexpr uint32_t kTrustedUid = 3;
inline constexpr uint32_t kTrustedPacketSequenceId = 10;
inline constexpr uint32_t kInternedData = 12;
inline constexpr uint32_t kSequenceFlags = 13;
inline constexpr uint32_t kIncrementalStateCleared = 41;
inline constexpr uint32_t kTracePacketDefaults = 59;
inline constexpr uint32_t kPreviousPacketDropped = 42;
inline constexpr uint32_t kFirstPacketOnSequence = 87;
// SequenceFlags
inline constexpr uint32_t kSeqIncrementalStateCleared = 1;
inline constexpr uint32_t kSeqNeedsIncrementalState = 2;
}  // namespace packet

// message TracePacketDefaults / TrackEventDefaults
namespace defaults {
inline constexpr uint32_t kTimestampClockId = 58;
inline constexpr uint32_t kTrackEventDefaults = 11;
inline constexpr uint32_t kTrackUuid = 11;
inline constexpr uint32_t kExtraCounterTrackUuids = 31;
inline constexpr uint32_t kExtraDoubleCounterTrackUuids = 45;
}  // namespace defaults

// message InternedData and the interned entries (EventCategory, EventName, DebugAnnotationName,
// InternedString all put their id in field 1 and their text in field 2).
namespace interned {
inline constexpr uint32_t kEventCategories = 1;
inline constexpr uint32_t kEventNames = 2;
inline constexpr uint32_t kDebugAnnotationNames = 3;
inline constexpr uint32_t kDebugAnnotationStringValues = 29;
inline constexpr uint32_t kCorrelationIdStr = 43;
inline constexpr uint32_t kIid = 1;
inline constexpr uint32_t kName = 2;
}  // namespace interned

// message TrackEvent
namespace event {
inline constexpr uint32_t kCategoryIids = 3;
inline constexpr uint32_t kCategories = 22;
inline constexpr uint32_t kNameIid = 10;
inline constexpr uint32_t kName = 23;
inline constexpr uint32_t kType = 9;
inline constexpr uint32_t kTrackUuid = 11;
inline constexpr uint32_t kCounterValue = 30;
inline constexpr uint32_t kDoubleCounterValue = 44;
inline constexpr uint32_t kExtraCounterTrackUuids = 31;
inline constexpr uint32_t kExtraCounterValues = 12;
inline constexpr uint32_t kExtraDoubleCounterTrackUuids = 45;
inline constexpr uint32_t kExtraDoubleCounterValues = 46;
inline constexpr uint32_t kFlowIdsOld = 36;             // uint64, deprecated
inline constexpr uint32_t kFlowIds = 47;                // fixed64
inline constexpr uint32_t kTerminatingFlowIdsOld = 42;  // uint64, deprecated
inline constexpr uint32_t kTerminatingFlowIds = 48;     // fixed64
inline constexpr uint32_t kCorrelationId = 52;
inline constexpr uint32_t kCorrelationIdStr = 53;
inline constexpr uint32_t kCorrelationIdStrIid = 54;
inline constexpr uint32_t kDebugAnnotations = 4;
inline constexpr uint32_t kTimestampDeltaUs = 1;
inline constexpr uint32_t kTimestampAbsoluteUs = 16;
inline constexpr uint32_t kThreadTimeDeltaUs = 2;
inline constexpr uint32_t kThreadTimeAbsoluteUs = 17;
inline constexpr uint32_t kThreadInstructionCountDelta = 8;
inline constexpr uint32_t kThreadInstructionCountAbsolute = 20;
inline constexpr uint32_t kLegacyEvent = 6;
// TrackEvent.Type
inline constexpr uint32_t kTypeUnspecified = 0;
inline constexpr uint32_t kTypeSliceBegin = 1;
inline constexpr uint32_t kTypeSliceEnd = 2;
inline constexpr uint32_t kTypeInstant = 3;
inline constexpr uint32_t kTypeCounter = 4;
inline constexpr uint32_t kTypeState = 5;
}  // namespace event

// message TrackEvent.LegacyEvent
namespace legacy {
inline constexpr uint32_t kNameIid = 1;
inline constexpr uint32_t kPhase = 2;
inline constexpr uint32_t kDurationUs = 3;
inline constexpr uint32_t kUnscopedId = 6;
inline constexpr uint32_t kLocalId = 10;
inline constexpr uint32_t kGlobalId = 11;
inline constexpr uint32_t kIdScope = 7;
inline constexpr uint32_t kBindId = 8;
inline constexpr uint32_t kBindToEnclosing = 12;
inline constexpr uint32_t kFlowDirection = 13;
inline constexpr uint32_t kInstantEventScope = 14;
inline constexpr uint32_t kPidOverride = 18;
inline constexpr uint32_t kTidOverride = 19;
// FlowDirection
inline constexpr uint32_t kFlowIn = 1;
inline constexpr uint32_t kFlowOut = 2;
inline constexpr uint32_t kFlowInOut = 3;
// InstantEventScope
inline constexpr uint32_t kScopeGlobal = 1;
inline constexpr uint32_t kScopeProcess = 2;
inline constexpr uint32_t kScopeThread = 3;
}  // namespace legacy

// message DebugAnnotation (and its NestedValue)
namespace annotation {
inline constexpr uint32_t kNameIid = 1;
inline constexpr uint32_t kName = 10;
inline constexpr uint32_t kBoolValue = 2;
inline constexpr uint32_t kUintValue = 3;
inline constexpr uint32_t kIntValue = 4;
inline constexpr uint32_t kDoubleValue = 5;
inline constexpr uint32_t kStringValue = 6;
inline constexpr uint32_t kPointerValue = 7;
inline constexpr uint32_t kNestedValue = 8;
inline constexpr uint32_t kLegacyJsonValue = 9;
inline constexpr uint32_t kStringValueIid = 17;
inline constexpr uint32_t kDictEntries = 11;
inline constexpr uint32_t kArrayValues = 12;
// NestedValue
inline constexpr uint32_t kNestedType = 1;  // UNSPECIFIED = 0 (a leaf), DICT = 1, ARRAY = 2
inline constexpr uint32_t kNestedDictKeys = 2;
inline constexpr uint32_t kNestedDictValues = 3;
inline constexpr uint32_t kNestedArrayValues = 4;
inline constexpr uint32_t kNestedIntValue = 5;
inline constexpr uint32_t kNestedDoubleValue = 6;
inline constexpr uint32_t kNestedBoolValue = 7;
inline constexpr uint32_t kNestedStringValue = 8;
inline constexpr uint32_t kNestedDict = 1;
inline constexpr uint32_t kNestedArray = 2;
}  // namespace annotation

// message TrackDescriptor, ProcessDescriptor, ThreadDescriptor, CounterDescriptor
namespace track {
inline constexpr uint32_t kUuid = 1;
inline constexpr uint32_t kParentUuid = 5;
inline constexpr uint32_t kName = 2;
inline constexpr uint32_t kStaticName = 10;
inline constexpr uint32_t kAtraceName = 13;
inline constexpr uint32_t kDescription = 14;
inline constexpr uint32_t kProcess = 3;
inline constexpr uint32_t kThread = 4;
inline constexpr uint32_t kCounter = 8;
inline constexpr uint32_t kState = 18;
inline constexpr uint32_t kSiblingOrderRank = 12;
inline constexpr uint32_t kSiblingMergeBehavior = 15;
inline constexpr uint32_t kSiblingMergeBehaviorNone = 2;
// ProcessDescriptor
inline constexpr uint32_t kProcessPid = 1;
inline constexpr uint32_t kProcessName = 6;
inline constexpr uint32_t kProcessLabels = 8;
inline constexpr uint32_t kProcessLegacySortIndex = 3;
// ThreadDescriptor (also TracePacket.thread_descriptor, the legacy per-sequence thread)
inline constexpr uint32_t kThreadPid = 1;
inline constexpr uint32_t kThreadTid = 2;
inline constexpr uint32_t kThreadName = 5;
inline constexpr uint32_t kThreadLegacySortIndex = 3;
inline constexpr uint32_t kThreadReferenceTimestampUs = 6;
inline constexpr uint32_t kThreadReferenceThreadTimeUs = 7;
inline constexpr uint32_t kThreadReferenceInstructionCount = 8;
// CounterDescriptor
inline constexpr uint32_t kCounterType = 1;  // 1 = thread time (ns), 2 = instruction count
inline constexpr uint32_t kCounterUnit = 3;  // 1 = ns, 2 = count, 3 = bytes
inline constexpr uint32_t kCounterUnitName = 6;
inline constexpr uint32_t kCounterUnitMultiplier = 4;
inline constexpr uint32_t kCounterIsIncremental = 5;
}  // namespace track

// message ClockSnapshot and ClockSnapshot.Clock
namespace clock {
inline constexpr uint32_t kClocks = 1;
inline constexpr uint32_t kPrimaryTraceClock = 2;
inline constexpr uint32_t kClockId = 1;
inline constexpr uint32_t kTimestamp = 2;
inline constexpr uint32_t kIsIncremental = 3;
inline constexpr uint32_t kUnitMultiplierNs = 4;
// BuiltinClock
inline constexpr uint32_t kRealtime = 1;
inline constexpr uint32_t kMonotonic = 3;
inline constexpr uint32_t kBoottime = 6;
// Clock ids 64..127 are scoped to one packet sequence.
inline constexpr uint32_t kFirstSequenceClock = 64;
inline constexpr uint32_t kLastSequenceClock = 127;
}  // namespace clock

// message ChromeEventBundle and ChromeMetadata: name / value pairs of trace metadata, which
// Perfetto's trace processor lists in its metadata table.
namespace chrome {
inline constexpr uint32_t kMetadata = 2;
inline constexpr uint32_t kMetadataName = 1;
inline constexpr uint32_t kMetadataStringValue = 2;
inline constexpr uint32_t kMetadataBoolValue = 3;
inline constexpr uint32_t kMetadataIntValue = 4;
inline constexpr uint32_t kMetadataJsonValue = 5;
}  // namespace chrome

// ---- What opscope reserves (docs/formats.md, "Perfetto") ----

// The ChromeMetadata entry (json_value) that carries what opscope's model holds beyond Perfetto's
// fields: trace metadata, processes' and tracks' extra fields, activity kinds per category, flow
// categories. Written first in the file; a reader that does not know it shows it as metadata.
inline constexpr std::string_view kOpscopeMetadataName = "opscope";
// Its schema version; a reader ignores a blob of a newer version than it knows.
inline constexpr int64_t kOpscopeMetadataVersion = 1;
// Debug annotations opscope writes on a slice only where the model's field is not what a reader
// derives from the slice's category and args.
inline constexpr std::string_view kKindAnnotation = "opscope.kind";
inline constexpr std::string_view kExternalIdAnnotation = "opscope.external_id";
inline constexpr std::string_view kInputShapesAnnotation = "opscope.input_shapes";
// Debug annotation string values interned under an iid from this one on hold a JSON value's text
// (an array or object, as the model's args hold it), not a string: opscope's reader takes them as
// JSON when the trace carries its metadata entry; other readers show the text.
inline constexpr uint64_t kJsonStringIidBase = uint64_t{1} << 28;
// A flow id with this bit set is not the model's flow id: the blob's "flows" table maps its low
// bits (the flow's ordinal) to the original id, category and name.
inline constexpr uint64_t kListedFlowBit = uint64_t{1} << 63;
// TrackKind's name in the blob, by the enumerator's value.
inline constexpr std::string_view kTrackKindNames[] = {"thread", "device_stream", "device_engine",
                                                       "counter"};

}  // namespace opscope::perfetto

#endif  // OPSCOPE_TRACE_PERFETTO_PROTOS_H_
