export function commentCount(comments) {
  return comments.length;
}
