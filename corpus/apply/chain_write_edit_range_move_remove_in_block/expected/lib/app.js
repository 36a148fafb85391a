// new header
function main() {
  console.log("v2");
}
main();
// footer
