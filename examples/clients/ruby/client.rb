# A Ruby client of protokube's (and any Kubernetes API server's) protobuf encoding, built on the
# stubs `make stubs LANG=ruby` writes (protoc 3.21 with Debian's ruby-google-protobuf 3.21). It reads
# a Pod, a PodList and three watch events, and creates a ConfigMap — every body as
# application/vnd.kubernetes.protobuf. Field names are the .proto's (camelCase, as upstream's JSON names).
#
#   ruby -I stubs/ruby client.rb http://127.0.0.1:8080 default

require "net/http"
require "uri"
require "k8s/io/api/core/v1/types_pb"

PROTOBUF = "application/vnd.kubernetes.protobuf"
# Every protobuf body starts with "k8s" and a zero byte.
MAGIC = "k8s\x00".b
Unknown = K8s::Io::Apimachinery::Pkg::Runtime::Unknown
TypeMeta = K8s::Io::Apimachinery::Pkg::Runtime::TypeMeta
Core = K8s::Io::Api::Core::V1
Meta = K8s::Io::Apimachinery::Pkg::Apis::Meta::V1

# Open an envelope: the magic, then a runtime.Unknown whose raw field holds the object.
def unwrap(body)
  raise "no k8s\\x00 envelope: #{body.inspect}" unless body.b.start_with?(MAGIC)
  Unknown.decode(body.b[MAGIC.size..])
end

# Put an object into an envelope, naming its apiVersion and kind.
def wrap(object, api_version, kind)
  unknown = Unknown.new(typeMeta: TypeMeta.new(apiVersion: api_version, kind: kind), raw: object.class.encode(object))
  MAGIC + Unknown.encode(unknown)
end

def get(uri)
  Net::HTTP.start(uri.host, uri.port) { |http| http.get(uri.request_uri, "Accept" => PROTOBUF).body }
end

server, namespace = ARGV
base = "#{server}/api/v1/namespaces/#{namespace}"

pod = Core::Pod.decode(unwrap(get(URI("#{base}/pods/web"))).raw)
puts "pod #{pod.metadata.name} image #{pod.spec.containers[0].image}"

pods = Core::PodList.decode(unwrap(get(URI("#{base}/pods"))).raw)
puts "pods #{pods.items.size}"

# A watch: each frame is a 4-byte big-endian length, then a WatchEvent whose object is an envelope.
# After three events the client hangs up (an exception makes Net::HTTP close the connection).
class Enough < StandardError; end
uri = URI("#{base}/pods?watch=1")
begin
Net::HTTP.start(uri.host, uri.port) do |http|
  http.request(Net::HTTP::Get.new(uri.request_uri, "Accept" => PROTOBUF)) do |response|
    buffer, seen = "".b, 0
    response.read_body do |chunk|
      buffer << chunk
      while seen < 3 && buffer.size >= 4 && buffer.size >= 4 + buffer.unpack1("N")
        length = buffer.unpack1("N")
        event = Meta::WatchEvent.decode(buffer[4, length])
        buffer = buffer[(4 + length)..]
        unknown = unwrap(event.object.raw)
        puts "event #{event.type} #{unknown.typeMeta.kind} #{Core::Pod.decode(unknown.raw).metadata.name}"
        seen += 1
      end
      raise Enough if seen == 3
    end
  end
end
rescue Enough
end

config_map = Core::ConfigMap.new(metadata: Meta::ObjectMeta.new(name: "from-ruby"), data: { "language" => "ruby" })
uri = URI("#{base}/configmaps")
created = Net::HTTP.start(uri.host, uri.port) do |http|
  http.post(uri.request_uri, wrap(config_map, "v1", "ConfigMap"), "Content-Type" => PROTOBUF, "Accept" => PROTOBUF)
end
stored = Core::ConfigMap.decode(unwrap(created.body).raw)
puts "created #{created.code} #{stored.metadata.name} uid #{stored.metadata.uid}"
