{
  description = "Lead Intake API: server-to-server lead intake for real-estate CRMs";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ];
      forAllSystems = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
    in
    {
      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          packages = [
            pkgs.nodejs_24
            pkgs.postgresql_18
            pkgs.opentelemetry-collector-contrib
            pkgs.jq
            pkgs.curl
          ];
          shellHook = ''
            export PATH="$PWD/node_modules/.bin:$PATH"
            echo "lead-intake dev shell: node $(node --version), psql $(psql --version | cut -d' ' -f3)"
            echo "  npm ci && npm start      serve the API on http://127.0.0.1:8080 (embedded PostgreSQL)"
            echo "  npm test                 run the test suite"
            echo "  npm run collector        local OTLP/HTTP collector on :4318 printing spans"
          '';
        };
      });
    };
}
